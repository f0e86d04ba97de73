import { isUniqueViolation, type Db } from '@intake/shared/base';
import { newId, problem } from '@intake/shared/contracts';
import { type Principal } from '@intake/shared/auth';
import { deleteSavedViewRow, insertSavedView, type SavedViewRow, type ViewFilters } from './saved-view.repository';
import { formExists } from '../webhooks/webhook.repository';
import type { Audit } from '../platform/audit-trail';

/** Saves the form's filters under a name, for everyone in the account (404 for a form not the account's, 409 for a name taken). */
export async function saveView(props: {
  db: Db;
  audit: Audit;
  principal: Principal;
  formId: string;
  name: string;
  filters: ViewFilters;
  now: Date;
}): Promise<SavedViewRow> {
  const { db, principal, formId } = props;
  if (!(await formExists(db, principal.accountId, formId))) throw problem('not-found', `No form ${formId}`);
  try {
    return await db.transaction(async (trx) => {
      const view = await insertSavedView(trx, {
        id: newId('savedView', props.now.getTime()),
        account_id: principal.accountId,
        form_id: formId,
        name: props.name,
        filters: props.filters,
        created_by: principal.actor.label ?? principal.actor.id,
        created_at: props.now,
      });
      await props.audit.record(trx, {
        action: 'view.saved',
        target: { type: 'form', id: formId },
        details: { name: view.name },
      });
      return view;
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    throw problem('conflict', `The form already has a view named "${props.name}"`, {
      errors: [{ field: 'body/name', message: 'is taken by another view of this form' }],
    });
  }
}

export async function deleteView(props: { db: Db; audit: Audit; accountId: string; id: string }): Promise<void> {
  await props.db.transaction(async (trx) => {
    // Written first, so the entry finds the view's project; a view that is not there takes it back.
    await props.audit.record(trx, { action: 'view.deleted', target: { type: 'view', id: props.id } });
    if (!(await deleteSavedViewRow(trx, props.accountId, props.id))) throw problem('not-found', `No view ${props.id}`);
  });
}

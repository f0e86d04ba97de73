import { Problem, problem } from '@intake/shared/contracts';
import { type Platform } from '@intake/shared/runtime';
import {
  findSubmission,
  findSubmissionIds,
  listSubmissionsPage,
  type Order,
  type SubmissionFilter,
} from './submission.repository';
import { getForm } from './forms';
import { deleteSubmission, setSubmissionRead, setSubmissionStatus } from './submissions';
import { auditAsOne, type Audit } from '../platform/audit-trail';

type Deps = Pick<Platform, 'db' | 'clock' | 'blobs' | 'logger'>;

/** What a bulk action over a filter can do to each submission it matches. */
export type BulkAction = 'delete' | 'spam' | 'received' | 'read' | 'unread';

/**
 * The submissions either side of one in the inbox's list (its filter and order): `previous` is the one listed
 * before it, `next` the one after. Either is null at an end, and both when the submission does not match the filter.
 */
export async function submissionNeighbours(
  props: Pick<Deps, 'db'> & Omit<SubmissionFilter, 'formId'> & { id: string; order?: Order },
): Promise<{ previous: string | null; next: string | null }> {
  const { db, id, order = 'desc', ...rest } = props;
  const row = await findSubmission(db, rest.accountId, id);
  if (!row) throw problem('not-found', `No submission ${id}`);
  const filter = { ...rest, formId: row.form_id };
  const at = { receivedAt: row.received_at, id: row.id };
  const back = order === 'desc' ? 'asc' : 'desc';
  const [previous, next] = await Promise.all([
    listSubmissionsPage(db, { ...filter, order: back, after: at, limit: 1 }),
    listSubmissionsPage(db, { ...filter, order, after: at, limit: 1 }),
  ]);
  return { previous: previous[0]?.id ?? null, next: next[0]?.id ?? null };
}

/**
 * Applies one action to every submission of a form the filter matches when asked (their ids are read first, so
 * what arrives meanwhile is left alone). Each is handled as its single-submission route handles it.
 */
export async function bulkByFilter(
  props: Deps & SubmissionFilter & { audit: Audit; action: BulkAction },
): Promise<{ done: number }> {
  const { action, ...deps } = props;
  await getForm({ db: deps.db, accountId: deps.accountId, id: deps.formId });
  const ids = await findSubmissionIds(deps.db, deps);
  let done = 0;
  for (let i = 0; i < ids.length; i += BULK_CHUNK)
    done += (await bulkChange({ ...deps, action, ids: ids.slice(i, i + BULK_CHUNK), target: deps.formId })).length;
  return { done };
}

/** Submissions a bulk change handles per transaction (and per audit entry). */
export const BULK_CHUNK = 100;

/**
 * One action on each of these submissions of the account, each handled as its single-submission route handles it, in
 * one transaction with one audit entry for them all (`submissions.bulk_changed` with the action and the count; none
 * for read marks, which the log does not record). One deleted meanwhile is simply not done. Returns the ids done.
 */
export async function bulkChange(
  props: Deps & { audit: Audit; accountId: string; action: BulkAction; ids: string[]; target?: string },
): Promise<string[]> {
  const { action, ids, target, audit, ...deps } = props;
  const entry = (count: number) =>
    action === 'read' || action === 'unread'
      ? null
      : {
          action: 'submissions.bulk_changed' as const,
          target: target ? { type: 'form', id: target } : undefined,
          details: { action, count },
        };
  const done: string[] = [];
  await auditAsOne(deps.db, audit, entry, async (trx, items) => {
    for (const id of ids) if (await changeOne({ ...deps, db: trx, audit: items }, action, id)) done.push(id);
    return done.length;
  });
  return done;
}

/** The action on one submission; false when it is not there (deleted meanwhile, another account's). */
async function changeOne(
  deps: Deps & { audit: Audit; accountId: string },
  action: BulkAction,
  id: string,
): Promise<boolean> {
  try {
    if (action === 'delete') await deleteSubmission({ ...deps, id });
    else if (action === 'read' || action === 'unread')
      await setSubmissionRead({ ...deps, id, read: action === 'read' });
    else await setSubmissionStatus({ ...deps, id, status: action });
    return true;
  } catch (err) {
    if (!(err instanceof Problem && err.slug === 'not-found')) throw err;
    return false;
  }
}

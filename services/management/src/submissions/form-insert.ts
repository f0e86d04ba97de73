import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { isUniqueViolation, type Db } from '@intake/shared/base';
import { newId, problem } from '@intake/shared/contracts';
import { insertForm, type FormRow, type FormWrite } from './form.repository';
import { findFormDefaults } from './project.repository';
import { INHERITABLE_SETTINGS, pickDefaults } from './form-defaults';
import type { Audit } from '../platform/audit-trail';

/**
 * A URL-safe slug from a name: lower-case ASCII letters, digits and single hyphens. The first try is the name's slug
 * alone; only when that is taken (`attempt` 1 on) does it get a random suffix.
 */
export function generateSlug(name: string, attempt = 0): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  if (attempt === 0) return base || 'form';
  const suffix = randomBytes(5).toString('hex').slice(0, 6);
  return `${base || 'form'}-${suffix}`;
}

export function slugTaken(slug: string) {
  return problem('conflict', `The slug "${slug}" is already taken`, {
    errors: [{ field: 'body/slug', message: 'is already taken' }],
  });
}

/** What a new form is written with: its columns, and the inheritable settings among them that are its own. */
export interface NewForm {
  accountId: string;
  projectId: string;
  name: string;
  /** Given: taken or 409; absent: made from the name, retried with a suffix while taken. */
  slug?: string;
  values: FormWrite;
  overridden: string[];
  /** The `form.created` entry's details beside the slug. */
  details?: Record<string, unknown>;
}

/**
 * Writes a new form into its project (404 when the account has no such project): the project's defaults for every
 * inheritable setting it does not override, its own values for the rest, and its `form.created` entry. The project's
 * row is held against a change of its defaults meanwhile, so the form is made with them as they commit. A try whose
 * generated slug is taken is undone alone (a savepoint, inside a caller's transaction) and made again.
 */
export async function insertNewForm(
  db: Db | Knex.Transaction,
  props: NewForm & { audit: Audit; now: Date },
): Promise<FormRow> {
  const { accountId, projectId, now, overridden } = props;
  for (let attempt = 0; ; attempt++) {
    const slug = props.slug ?? generateSlug(props.name, attempt);
    try {
      return await db.transaction(async (trx) => {
        const defaults = await findFormDefaults(trx, accountId, projectId, 'share');
        if (!defaults) throw problem('not-found', `No project ${projectId}`);
        const inherited = pickDefaults(
          defaults,
          INHERITABLE_SETTINGS.filter((k) => !overridden.includes(k)),
        ) as FormWrite;
        const form = await insertForm(trx, {
          ...props.values,
          ...inherited,
          overridden,
          id: newId('form', now.getTime()),
          account_id: accountId,
          project_id: projectId,
          name: props.name,
          slug,
          created_at: now,
          updated_at: now,
        });
        await props.audit.record(trx, {
          action: 'form.created',
          target: { type: 'form', id: form.id },
          details: { slug: form.slug, ...props.details },
        });
        return form;
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      if (props.slug !== undefined || attempt >= 4) throw slugTaken(slug);
    }
  }
}

/**
 * A new form with the settings of `source` and the same settings of its own (its `overridden`), named `name`, in
 * `projectId`, whose defaults it then inherits. Its webhooks, integrations, saved views and submissions are not
 * copied: a copy never sends to the original's endpoints.
 */
export function copyForm(
  db: Db | Knex.Transaction,
  props: { audit: Audit; now: Date; source: FormRow; name: string; projectId: string },
): Promise<FormRow> {
  // What makes it that form, and where it is, is the copy's own; every other column is a setting, copied.
  const {
    id,
    account_id,
    created_at: _created,
    updated_at: _updated,
    deleted_at: _deleted,
    digest_through: _digest,
    slug: _slug,
    name: _name,
    project_id: _project,
    ...settings
  } = props.source;
  return insertNewForm(db, {
    ...props,
    accountId: account_id,
    values: settings,
    overridden: settings.overridden,
    details: { copy_of: id },
  });
}

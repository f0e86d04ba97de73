import type { Knex } from 'knex';
import { NEWEST_FIRST, type Queryable } from '@intake/shared/base';
import {
  type NotificationSchedule,
  type NotificationTemplate,
  type SpamFilter,
  type SpamModelScope,
  type SpamRules,
  type VisitorPages,
} from '@intake/shared/contracts';
import type { AutoresponseSettings } from './autoresponse.repository';

export type FormStatus = 'live' | 'paused' | 'draft';
export type ChallengeProvider = 'turnstile' | 'hcaptcha' | 'recaptcha';

export interface FormRow {
  id: string;
  account_id: string;
  project_id: string;
  name: string;
  slug: string;
  status: FormStatus;
  honeypot_field: string;
  bot_challenge_provider: ChallengeProvider | null;
  bot_challenge_secret: string | null;
  notify_emails: string[];
  redirect_url: string | null;
  allowed_origins: string[];
  spam_filter: SpamFilter;
  spam_rules: SpamRules;
  /** Whose classifier judges its posts: its project's or its own. */
  spam_model: SpamModelScope;
  /** The confirmation mailed to the submitter (json: kept as written). */
  autoresponse: AutoresponseSettings | null;
  /** Days a submission is kept; null: until deleted. */
  retention_days: number | null;
  /** Days spam is kept; null: until deleted. */
  spam_retention_days: number | null;
  /** Payload and files go once every delivery succeeded and the e-mail is sent. */
  delete_after_delivery: boolean;
  /** Posts per address and rate-limit window; null: the deployment's RATE_LIMIT_POINTS. */
  rate_limit: number | null;
  /** The display name of its mails; null: MAIL_FROM's. */
  mail_from_name: string | null;
  /** The owner's subject and text of the notification (json: kept as written). */
  notification_template: NotificationTemplate | null;
  notification_schedule: NotificationSchedule;
  /** The IANA zone its mails give times in (checked on input; 'UTC' by default). */
  time_zone: string;
  /** The owner's pages for visitors' browsers (json: kept as written). */
  pages: VisitorPages | null;
  /** The inheritable settings it sets itself (form-defaults.ts): its project's defaults are not written over them. */
  overridden: string[];
  /** Where the next daily digest starts (the delivery service's). */
  digest_through: Date | null;
  /** When it went to the trash; null: not in it. */
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Columns a form is written with; JSON arrays and objects are stringified for the json(b) columns. */
export type FormWrite = Partial<Omit<FormRow, 'id' | 'account_id' | 'created_at' | 'digest_through' | 'deleted_at'>>;

function toDb(values: FormWrite): Record<string, unknown> {
  const out: Record<string, unknown> = { ...values };
  if (values.notify_emails) out['notify_emails'] = JSON.stringify(values.notify_emails);
  if (values.allowed_origins) out['allowed_origins'] = JSON.stringify(values.allowed_origins);
  if (values.spam_rules) out['spam_rules'] = JSON.stringify(values.spam_rules);
  if (values.autoresponse) out['autoresponse'] = JSON.stringify(values.autoresponse);
  if (values.notification_template) out['notification_template'] = JSON.stringify(values.notification_template);
  if (values.pages) out['pages'] = JSON.stringify(values.pages);
  return out;
}

export async function insertForm(
  db: Queryable,
  row: FormWrite & { id: string; account_id: string; name: string; slug: string; created_at: Date },
): Promise<FormRow> {
  const columns = toDb(row);
  if (row.notification_schedule === 'daily') columns['digest_through'] = row.created_at;
  const [created] = await db('forms').insert(columns).returning('*');
  return created as FormRow;
}

/**
 * One page of the account's forms, newest first, after `after` (the last row of the previous page): those not in the
 * trash, or (`trashed`) those in it.
 */
export async function pageOfForms(
  db: Queryable,
  accountId: string,
  options: {
    after?: { at: Date; id: string };
    limit: number;
    trashed?: boolean;
    /** Only these projects' forms (null: every project's). */
    projects: string[] | null;
  },
): Promise<FormRow[]> {
  const query = db('forms').where({ account_id: accountId });
  if (options.projects !== null) query.whereIn('project_id', options.projects);
  if (options.trashed) query.whereNotNull('deleted_at');
  else query.whereNull('deleted_at');
  if (options.after) query.whereRaw('(created_at, id) < (?, ?)', [options.after.at, options.after.id]);
  return query.orderBy(NEWEST_FIRST).limit(options.limit);
}

/** The account's form, unless it is in the trash (or, with `trashed`, only when it is); `lock`: its row locked. */
export async function findForm(
  db: Queryable,
  accountId: string,
  id: string,
  options: { trashed?: boolean; lock?: boolean } = {},
): Promise<FormRow | undefined> {
  const query = db('forms').where({ account_id: accountId, id });
  if (options.lock) query.forUpdate();
  return (options.trashed ? query.whereNotNull('deleted_at') : query.whereNull('deleted_at')).first();
}

/** Moves the form to the trash (or, `at` null, out of it); false when the account has no such form there to move. */
export async function setFormTrashed(db: Queryable, accountId: string, id: string, at: Date): Promise<boolean> {
  return (
    (await db('forms').where({ account_id: accountId, id }).whereNull('deleted_at').update({ deleted_at: at })) > 0
  );
}

/** Takes the form out of the trash if it went there after `trashedSince` (older ones are deleted for good, if not yet purged). */
export async function restoreFormRow(
  db: Queryable,
  accountId: string,
  id: string,
  trashedSince: Date,
): Promise<boolean> {
  return (
    (await db('forms')
      .where({ account_id: accountId, id })
      .where('deleted_at', '>', trashedSince)
      .update({ deleted_at: null })) > 0
  );
}

export async function updateFormRow(
  db: Queryable,
  accountId: string,
  id: string,
  values: FormWrite,
): Promise<FormRow | undefined> {
  const columns = toDb(values);
  // A form that becomes daily has its first digest a day from now; one that was daily keeps its place.
  if (values.notification_schedule === 'daily')
    columns['digest_through'] = db.raw(`CASE WHEN notification_schedule = 'daily' THEN digest_through ELSE ? END`, [
      values.updated_at ?? new Date(),
    ]);
  const [row] = await db('forms')
    .where({ account_id: accountId, id })
    .whereNull('deleted_at')
    .update(columns)
    .returning('*');
  return row as FormRow | undefined;
}

/**
 * Writes a project's changed defaults (`values`, each an inheritable setting) into every form of the project, the
 * trash's too, each setting only where the form does not override it; the forms written, with their slugs.
 */
export async function writeProjectDefaults(
  db: Queryable,
  accountId: string,
  projectId: string,
  values: FormWrite,
  at: Date,
): Promise<{ id: string; slug: string }[]> {
  const settings = Object.entries(toDb(values));
  if (settings.length === 0) return [];
  const inherited = Object.fromEntries(
    settings.map(([column, value]) => [
      column,
      db.raw('CASE WHEN ? = ANY(overridden) THEN ?? ELSE ? END', [column, column, value as Knex.Value]),
    ]),
  );
  return db('forms')
    .where({ account_id: accountId, project_id: projectId })
    .whereRaw('NOT (overridden @> ?::text[])', [settings.map(([column]) => column)])
    .update({ ...inherited, updated_at: at })
    .returning(['id', 'slug']);
}

/** The project's forms out of the trash, oldest first (to copy them). */
export async function formsOfProject(db: Queryable, accountId: string, projectId: string): Promise<FormRow[]> {
  return db('forms')
    .where({ account_id: accountId, project_id: projectId })
    .whereNull('deleted_at')
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
}

/** Locks the form's row until the transaction ends (in the trash or not); false when the account has no such form. */
export async function lockForm(trx: Knex.Transaction, accountId: string, id: string): Promise<boolean> {
  return Boolean(await trx('forms').where({ account_id: accountId, id }).forUpdate().first('id'));
}

/** Storage keys of every file of the form's submissions (collected before the rows go). */
export async function findFileKeysOfForm(db: Queryable, accountId: string, formId: string): Promise<string[]> {
  const rows: { storage_key: string }[] = await db('submission_files as f')
    .join('submissions as s', 's.id', 'f.submission_id')
    .where({ 's.account_id': accountId, 's.form_id': formId })
    .select('f.storage_key');
  return rows.map((r) => r.storage_key);
}

/** Deletes the form; submissions, their file rows, webhooks and deliveries go with it (ON DELETE CASCADE). */
export async function deleteFormRow(db: Queryable, accountId: string, id: string): Promise<boolean> {
  return (await db('forms').where({ account_id: accountId, id }).delete()) > 0;
}

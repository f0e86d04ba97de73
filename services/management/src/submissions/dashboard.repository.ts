import type { Queryable } from '@intake/shared/base';

/** Unread submissions are counted up to this many per form (an index-only scan that stops there). */
export const UNREAD_CAP = 1000;

export interface DayRow {
  day: string;
  received: number;
  spam: number;
}

export interface FormStatsRow {
  id: string;
  name: string;
  slug: string;
  status: string;
  created_at: Date;
  unread: number;
  last_submission_at: Date | null;
  failing_webhooks: number;
}

const FAILING = `(w.failing_since IS NOT NULL OR w.disabled_reason = 'failing')`;

/**
 * A page of a project's forms (out of the trash, newest first, after `after`) with what a dashboard shows of each: its
 * unread submissions (up to UNREAD_CAP, from their partial index), its last submission (one step back along its
 * (form_id, received_at) index) and its failing webhooks. Work per form is bounded, whatever it holds.
 */
export async function findFormStats(
  db: Queryable,
  props: { accountId: string; projectId: string; limit: number; after?: { at: Date; id: string } },
): Promise<FormStatsRow[]> {
  const query = db('forms as f')
    .where({ 'f.account_id': props.accountId, 'f.project_id': props.projectId })
    .whereNull('f.deleted_at')
    .select(
      'f.id',
      'f.name',
      'f.slug',
      'f.status',
      'f.created_at',
      db.raw(
        `(SELECT count(*) FROM (SELECT 1 FROM submissions s WHERE s.form_id = f.id AND s.read_at IS NULL
           AND s.status = 'received' AND s.deleted_at IS NULL LIMIT ?) u)::int AS unread`,
        [UNREAD_CAP],
      ),
      db.raw(`(SELECT s.received_at FROM submissions s WHERE s.form_id = f.id AND s.deleted_at IS NULL
        ORDER BY s.received_at DESC LIMIT 1) AS last_submission_at`),
      db.raw(`(SELECT count(*) FROM webhooks w WHERE w.form_id = f.id AND ${FAILING})::int AS failing_webhooks`),
    )
    .orderBy([
      { column: 'f.created_at', order: 'desc' },
      { column: 'f.id', order: 'desc' },
    ])
    .limit(props.limit);
  if (props.after) query.whereRaw('(f.created_at, f.id) < (?, ?)', [props.after.at, props.after.id]);
  return query;
}

/** Received and spam per UTC day since `from` of the given forms, by form (`usage_daily`'s primary key). */
export async function findFormDays(
  db: Queryable,
  accountId: string,
  formIds: string[],
  from: string,
): Promise<(DayRow & { form_id: string })[]> {
  if (formIds.length === 0) return [];
  return db('usage_daily')
    .where('account_id', accountId)
    .whereIn('form_id', formIds)
    .andWhere('day', '>=', from)
    .select('form_id', db.raw(`to_char(day, 'YYYY-MM-DD') AS day`), 'received', 'spam');
}

/**
 * Received and spam per UTC day since `from` by project (those in `projects`; null: all), from the rollup the usage
 * consumer keeps (`usage_daily_projects`): a row per project and day, whatever the number of forms.
 */
export async function findProjectDays(
  db: Queryable,
  accountId: string,
  projects: string[] | null,
  from: string,
): Promise<(DayRow & { project_id: string })[]> {
  const query = db('usage_daily_projects')
    .where('account_id', accountId)
    .andWhere('day', '>=', from)
    .select('project_id', db.raw(`to_char(day, 'YYYY-MM-DD') AS day`), 'received', 'spam');
  if (projects) query.whereIn('project_id', projects);
  return query;
}

/** Moves a form's counted usage from one project's rollup to another's (in the transaction that moves the form). */
export async function moveFormUsage(
  db: Queryable,
  props: { accountId: string; formId: string; from: string; to: string },
): Promise<void> {
  await db.raw(
    `WITH moved AS (SELECT day, received, spam FROM usage_daily WHERE account_id = :account AND form_id = :form),
     taken AS (
       UPDATE usage_daily_projects u SET received = u.received - m.received, spam = u.spam - m.spam
       FROM moved m WHERE u.account_id = :account AND u.project_id = :from AND u.day = m.day)
     INSERT INTO usage_daily_projects AS u (account_id, project_id, day, received, spam)
     SELECT :account, :to, day, received, spam FROM moved ORDER BY day
     ON CONFLICT (account_id, project_id, day) DO UPDATE
       SET received = u.received + excluded.received, spam = u.spam + excluded.spam`,
    { account: props.accountId, form: props.formId, from: props.from, to: props.to },
  );
}

/** Failing webhooks per project of the account (of forms out of the trash). */
export async function findFailingWebhooks(
  db: Queryable,
  accountId: string,
  projects: string[] | null,
): Promise<Map<string, number>> {
  const query = db('webhooks as w')
    .join('forms as f', 'f.id', 'w.form_id')
    .where('f.account_id', accountId)
    .whereNull('f.deleted_at')
    .whereRaw(FAILING)
    .groupBy('f.project_id')
    .select('f.project_id', db.raw('count(*)::int AS n'));
  if (projects) query.whereIn('f.project_id', projects);
  const rows: { project_id: string; n: number }[] = await query;
  return new Map(rows.map((r) => [r.project_id, r.n]));
}

/**
 * Each project's unread submissions (of its forms out of the trash), counted up to UNREAD_CAP per form from their
 * partial index and summed, and whether any form reached the cap (the sum is then a floor): the work is bounded by
 * forms × UNREAD_CAP, whatever the project holds.
 */
export async function findProjectUnread(
  db: Queryable,
  accountId: string,
  projects: string[] | null,
): Promise<Map<string, { n: number; capped: boolean }>> {
  const perForm = db('forms as f')
    .where('f.account_id', accountId)
    .whereNull('f.deleted_at')
    .select(
      'f.project_id',
      db.raw(
        `(SELECT count(*) FROM (SELECT 1 FROM submissions s WHERE s.form_id = f.id AND s.read_at IS NULL
           AND s.status = 'received' AND s.deleted_at IS NULL LIMIT ?) u)::int AS n`,
        [UNREAD_CAP],
      ),
    );
  if (projects) perForm.whereIn('f.project_id', projects);
  const rows: { project_id: string; n: number; capped: boolean }[] = await db
    .from(perForm.as('x'))
    .groupBy('x.project_id')
    .select('x.project_id', db.raw('sum(x.n)::int AS n'), db.raw('bool_or(x.n >= ?) AS capped', [UNREAD_CAP]));
  return new Map(rows.map((r) => [r.project_id, { n: r.n, capped: r.capped }]));
}

import { type Queryable } from '@intake/shared/base';
import { type ProjectColumns } from '@intake/shared/contracts';
import { ACCOUNT_QUOTA_SQL, accountWithPlan } from '@intake/shared/schema';

export interface AccountQuota {
  account_id: string;
  plan_id: string;
  plan_name: string;
  limit: number;
  contact_email: string | null;
}

export interface CounterRow {
  used: number;
  spam: number;
  file_bytes: number;
}

export interface BreakdownRow {
  received: number;
  spam: number;
  file_bytes: number;
}

// Knex queries over accounts, usage_counters and usage_daily; always scoped by account (the consumer's
// counting statement is in usage-batch.repository.ts).

export async function findAccountQuota(db: Queryable, accountId: string): Promise<AccountQuota | undefined> {
  return accountWithPlan(db, accountId).first(
    'accounts.id as account_id',
    'plans.id as plan_id',
    'plans.name as plan_name',
    db.raw(`${ACCOUNT_QUOTA_SQL} as "limit"`),
    'accounts.contact_email',
  );
}

/** How many of these projects are the account's (an id of another account's project is not counted). */
export async function countAccountProjects(db: Queryable, accountId: string, projects: string[]): Promise<number> {
  const row = await db('projects')
    .where({ account_id: accountId })
    .whereIn('id', projects)
    .count<{ n: string }>('* as n')
    .first();
  return Number(row?.n ?? 0);
}

export async function findCounters(db: Queryable, accountId: string, period: string): Promise<CounterRow> {
  const row = await db('usage_counters').where({ account_id: accountId, period }).first('used', 'spam', 'file_bytes');
  return { used: row?.used ?? 0, spam: row?.spam ?? 0, file_bytes: row?.file_bytes ?? 0 };
}

/** Only the rows of forms now in these projects (null: every row). */
type Projects = string[] | null;
const formsOf = (db: Queryable, projects: string[]) => db('forms').whereIn('project_id', projects).select('id');

/**
 * Per-form totals over [from, to) days, with the form's current name, slug and project (null once the form is
 * deleted; a project's report leaves deleted forms out).
 */
export async function findUsageByForm(
  db: Queryable,
  accountId: string,
  from: string,
  to: string,
  projects: Projects,
): Promise<(BreakdownRow & ProjectColumns & { form_id: string; name: string | null; slug: string | null })[]> {
  const query = db('usage_daily as u')
    .leftJoin('forms as f', (join) => {
      join.on('f.id', '=', 'u.form_id').andOn('f.account_id', '=', 'u.account_id');
    })
    .leftJoin('projects as p', 'p.id', 'f.project_id')
    .where('u.account_id', accountId);
  if (projects) query.whereIn('u.form_id', formsOf(db, projects));
  const rows = await query
    .andWhere('u.day', '>=', from)
    .andWhere('u.day', '<', to)
    .groupBy('u.form_id', 'f.name', 'f.slug', 'p.id')
    .orderBy('u.form_id')
    .select(
      'u.form_id',
      'f.name',
      'f.slug',
      'p.id as project_id',
      'p.name as project_name',
      'p.is_default as project_is_default',
      db.raw('sum(u.received)::int as received'),
      db.raw('sum(u.spam)::int as spam'),
      db.raw('sum(u.file_bytes)::bigint as file_bytes'),
    );
  return rows;
}

/** Per-day totals over [from, to) days, keyed `YYYY-MM-DD`. */
export async function findUsageByDay(
  db: Queryable,
  accountId: string,
  from: string,
  to: string,
  projects: Projects,
): Promise<Map<string, BreakdownRow>> {
  const query = db('usage_daily').where('account_id', accountId);
  if (projects) query.whereIn('form_id', formsOf(db, projects));
  const rows: (BreakdownRow & { day: string })[] = await query
    .andWhere('day', '>=', from)
    .andWhere('day', '<', to)
    .groupBy('day')
    .select(
      db.raw(`to_char(day, 'YYYY-MM-DD') as day`),
      db.raw('sum(received)::int as received'),
      db.raw('sum(spam)::int as spam'),
      db.raw('sum(file_bytes)::bigint as file_bytes'),
    );
  return new Map(rows.map((r) => [r.day, { received: r.received, spam: r.spam, file_bytes: r.file_bytes }]));
}

/** Bytes of every file the account (or its projects') stores now (deleted submissions take their files with them). */
export async function sumStoredFileBytes(db: Queryable, accountId: string, projects: Projects): Promise<number> {
  const query = db('submission_files').where({ account_id: accountId });
  if (projects)
    query.whereIn(
      'submission_id',
      db('submissions').where({ account_id: accountId }).whereIn('form_id', formsOf(db, projects)).select('id'),
    );
  const row = await query.first(db.raw('coalesce(sum(size), 0)::bigint as bytes'));
  return Number(row?.bytes ?? 0);
}

import { type Queryable } from '@intake/shared/base';
import { problem } from '@intake/shared/contracts';

/** The most a form of the account's plan may allow, and the plan's name. */
export async function planBound(db: Queryable, accountId: string): Promise<{ max: number; plan: string }> {
  const row = (await db('accounts as a')
    .join('plans as p', 'p.id', 'a.plan_id')
    .where('a.id', accountId)
    .first('p.max_rate_limit as max', 'p.name as plan')) as { max: number; plan: string } | undefined;
  if (!row) throw problem('not-found', `No account ${accountId}`);
  return row;
}

/** The form's own limit (undefined: no such form of the account out of the trash). */
export async function findFormRateLimit(
  db: Queryable,
  accountId: string,
  formId: string,
): Promise<{ rate_limit: number | null } | undefined> {
  return (await db('forms')
    .where({ id: formId, account_id: accountId })
    .whereNull('deleted_at')
    .first('rate_limit')) as { rate_limit: number | null } | undefined;
}

/** The form's refused posts on `today` (a UTC `YYYY-MM-DD`), in the 7 and the 30 days to it, and the latest's time. */
export async function refusalCounts(
  db: Queryable,
  formId: string,
  today: string,
): Promise<{ today: number; week: number; month: number; last_at: Date | null }> {
  const { rows } = await db.raw<{
    rows: { today: number; week: number; month: number; last_at: Date | null }[];
  }>(
    `SELECT coalesce(sum(refused) FILTER (WHERE day = :today::date), 0)::int AS today,
            coalesce(sum(refused) FILTER (WHERE day > :today::date - 7), 0)::int AS week,
            coalesce(sum(refused), 0)::int AS month,
            max(last_at) AS last_at
     FROM rate_limit_refusals WHERE form_id = :formId AND day > :today::date - 30`,
    { today, formId },
  );
  return rows[0]!;
}

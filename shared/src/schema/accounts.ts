import type { Queryable } from '../base/db';

/** An account's monthly quota, in SQL over `accounts` joined with `plans`: its override, else its plan's. */
export const ACCOUNT_QUOTA_SQL = 'coalesce(accounts.quota_override, plans.monthly_quota)::int';

/** The account `accountId` joined with its plan (`accounts`, `plans`): read it with `.first(...)`. */
export function accountWithPlan(db: Queryable, accountId: string) {
  return db('accounts').join('plans', 'plans.id', 'accounts.plan_id').where('accounts.id', accountId);
}

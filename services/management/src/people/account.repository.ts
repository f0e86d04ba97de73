import { type Queryable } from '@intake/shared/base';
import { ACCOUNT_QUOTA_SQL, accountWithPlan } from '@intake/shared/schema';

export interface PlanRow {
  id: string;
  monthly_quota: number;
}

/** An account as the operator CLI prints it: its plan and effective quota (the override, else the plan's). */
export interface AccountSummary {
  id: string;
  name: string;
  plan_id: string;
  quota: number;
  contact_email: string | null;
}

export async function findPlan(db: Queryable, planId: string): Promise<PlanRow | undefined> {
  return db('plans').where({ id: planId }).first('id', 'monthly_quota');
}

export async function insertAccount(
  db: Queryable,
  row: {
    id: string;
    name: string;
    plan_id: string;
    quota_override: number | null;
    contact_email: string | null;
    created_at: Date;
  },
): Promise<void> {
  await db('accounts').insert(row);
}

/** False when there is no such account. */
export async function updateAccountContactEmail(
  db: Queryable,
  accountId: string,
  contactEmail: string | null,
): Promise<boolean> {
  const updated = await db('accounts').where({ id: accountId }).update({ contact_email: contactEmail }).returning('id');
  return updated.length > 0;
}

export async function findAccountSummary(db: Queryable, accountId: string): Promise<AccountSummary | undefined> {
  return accountWithPlan(db, accountId).first(
    'accounts.id',
    'accounts.name',
    'accounts.plan_id',
    'accounts.contact_email',
    db.raw(`${ACCOUNT_QUOTA_SQL} as quota`),
  );
}

/** Whether the account exists. */
export async function accountExists(db: Queryable, accountId: string): Promise<boolean> {
  return (await db('accounts').where('id', accountId).first('id')) !== undefined;
}

/** The account's name and whether it requires two-factor of its members, or undefined when there is no such account. */
export async function findAccountSettings(
  db: Queryable,
  accountId: string,
): Promise<{ id: string; name: string; require_two_factor: boolean } | undefined> {
  const row = await db('accounts').where('id', accountId).first('id', 'name', 'require_two_factor');
  return row ? { id: row.id, name: row.name, require_two_factor: row.require_two_factor === true } : undefined;
}

export async function updateRequireTwoFactor(db: Queryable, accountId: string, required: boolean): Promise<void> {
  await db('accounts').where('id', accountId).update({ require_two_factor: required });
}

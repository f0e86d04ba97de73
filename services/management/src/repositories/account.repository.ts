import { ACCOUNT_QUOTA_SQL, accountWithPlan, type Queryable } from '@intake/shared';

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

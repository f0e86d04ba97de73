import { type Db } from '@intake/shared/base';
import { newId, problem } from '@intake/shared/contracts';
import { generateKey } from '@intake/shared/auth';
import { findAccountSummary, findPlan, insertAccount, updateAccountContactEmail } from './account.repository';
import { insertApiKey } from './api-key.repository';

export type PlanId = 'free' | 'pro' | 'team';

/** Creates an account with its first management key (returned this once). */
export async function createAccount(props: {
  db: Db;
  plan: PlanId;
  name?: string;
  quota?: number;
  contactEmail?: string;
  now: Date;
}): Promise<{
  account_id: string;
  name: string;
  plan: PlanId;
  quota: number;
  contact_email: string | null;
  management_key: string;
}> {
  const { db, now } = props;
  return db.transaction(async (trx) => {
    const plan = await findPlan(trx, props.plan);
    if (!plan) throw problem('validation-failed', `Unknown plan "${props.plan}"`);
    const accountId = newId('account', now.getTime());
    const name = props.name ?? 'Unnamed account';
    await insertAccount(trx, {
      id: accountId,
      name,
      plan_id: props.plan,
      quota_override: props.quota ?? null,
      contact_email: props.contactEmail ?? null,
      created_at: now,
    });
    const { key, prefix, hash } = generateKey('management');
    await insertApiKey(trx, {
      id: newId('apiKey', now.getTime()),
      account_id: accountId,
      type: 'management',
      name: 'created by the operator CLI',
      prefix,
      key_hash: hash,
      created_at: now,
      created_by_type: 'operator',
      created_by_id: null,
      created_by_label: 'operator CLI',
    });
    return {
      account_id: accountId,
      name,
      plan: props.plan,
      quota: props.quota ?? plan.monthly_quota,
      contact_email: props.contactEmail ?? null,
      management_key: key,
    };
  });
}

/** Sets (or, with null, clears) the address that receives the account's quota warnings. */
export async function setAccountContactEmail(props: {
  db: Db;
  accountId: string;
  contactEmail: string | null;
}): Promise<{ account_id: string; name: string; plan: string; quota: number; contact_email: string | null }> {
  const { db } = props;
  if (!(await updateAccountContactEmail(db, props.accountId, props.contactEmail)))
    throw problem('not-found', `No account ${props.accountId}`);
  const row = await findAccountSummary(db, props.accountId);
  if (!row) throw problem('not-found', `No account ${props.accountId}`);
  return { account_id: row.id, name: row.name, plan: row.plan_id, quota: row.quota, contact_email: row.contact_email };
}

import type { Queryable } from '@intake/shared/base';

export interface SignUpRow {
  token_hash: string;
  email: string;
  account_name: string;
  client: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

/**
 * Records a sign-up link unless the address or the client already had `limits` links since `since`: the count and
 * the insert in one transaction, under an advisory lock on the address and one on the client (taken in one order),
 * so that concurrent requests are counted one after another. Whether it was recorded.
 */
export async function insertSignUpWithin(
  db: Queryable,
  row: Pick<SignUpRow, 'token_hash' | 'email' | 'account_name' | 'client' | 'expires_at'>,
  props: { since: Date; perEmail: number; perClient: number },
): Promise<boolean> {
  return db.transaction(async (trx) => {
    for (const key of [`sign-ups:client:${row.client}`, `sign-ups:email:${row.email}`].sort())
      await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [key]);
    const recent = await countRecentSignUps(trx, { email: row.email, client: row.client, since: props.since });
    if (recent.email >= props.perEmail || recent.client >= props.perClient) return false;
    await trx('sign_ups').insert(row);
    return true;
  });
}

/** Sign-up links sent since `since` to the address, and from the client address. */
async function countRecentSignUps(
  db: Queryable,
  props: { email: string; client: string; since: Date },
): Promise<{ email: number; client: number }> {
  const row = await db.first(
    db.raw('(SELECT count(*) FROM sign_ups WHERE email = ? AND created_at >= ?)::int AS email', [
      props.email,
      props.since,
    ]),
    db.raw('(SELECT count(*) FROM sign_ups WHERE client = ? AND created_at >= ?)::int AS client', [
      props.client,
      props.since,
    ]),
  );
  return { email: row?.email ?? 0, client: row?.client ?? 0 };
}

/** The sign-up a link names, unless it was used or has expired. */
export function findLiveSignUp(db: Queryable, tokenHash: string, now: Date): Promise<SignUpRow | undefined> {
  return db('sign_ups').where({ token_hash: tokenHash }).whereNull('used_at').andWhere('expires_at', '>', now).first();
}

/** Spends a link; false when it was spent meanwhile. */
export async function spendSignUp(db: Queryable, tokenHash: string, now: Date): Promise<boolean> {
  return (await db('sign_ups').where({ token_hash: tokenHash }).whereNull('used_at').update({ used_at: now })) > 0;
}

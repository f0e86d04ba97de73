import type { Queryable } from '@intake/shared';

export interface SignUpRow {
  token_hash: string;
  email: string;
  account_name: string;
  client: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export async function insertSignUp(
  db: Queryable,
  row: Pick<SignUpRow, 'token_hash' | 'email' | 'account_name' | 'client' | 'expires_at'>,
): Promise<void> {
  await db('sign_ups').insert(row);
}

/** Sign-up links sent since `since` to the address, and from the client address. */
export async function countRecentSignUps(
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

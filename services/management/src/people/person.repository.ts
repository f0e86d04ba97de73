import { type Queryable } from '@intake/shared/base';
import { normaliseEmail } from '@intake/shared/contracts';

/** A person (`users`): their password, second factor and recovery codes (sha256 hashes). */
export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  password_hash: string | null;
  totp_secret: string | null;
  totp_enabled_at: Date | null;
  recovery_codes: string[];
  totp_last_step?: string | number | null;
  email_verified_at?: Date | null;
}

/** A person as their second factor needs them, found from one of their memberships (or by id). */
export interface PersonRow {
  user_id: string;
  email: string;
  password_hash: string | null;
  totp_secret: string | null;
  totp_enabled_at: Date | null;
  totp_last_step: string | null;
  recovery_codes: string[];
}

const PERSON_COLUMNS = [
  'u.id as user_id',
  'u.email',
  'u.password_hash',
  'u.totp_secret',
  'u.totp_enabled_at',
  'u.totp_last_step',
  'u.recovery_codes',
];

export function findUserByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  return db('users').where('email', normaliseEmail(email)).first();
}

/** The person behind a member, or undefined when the member has none (yet) or is gone. */
export async function findPersonOfMember(db: Queryable, memberId: string): Promise<PersonRow | undefined> {
  return db('members as m').join('users as u', 'u.id', 'm.user_id').where('m.id', memberId).first(PERSON_COLUMNS);
}

export async function findPerson(db: Queryable, userId: string): Promise<PersonRow | undefined> {
  return db('users as u').where('u.id', userId).first(PERSON_COLUMNS);
}

/** The person's active memberships, the one signed in to most recently first. */
export function activeMemberships(db: Queryable, userId: string) {
  return db('members as m')
    .join('accounts as a', 'a.id', 'm.account_id')
    .where({ 'm.user_id': userId, 'm.status': 'active' })
    .orderByRaw('m.last_sign_in_at DESC NULLS LAST, m.created_at')
    .select('m.id', 'm.account_id', 'm.role', 'm.email', 'a.name as account_name', 'a.require_two_factor');
}

/** Whether the person behind the member has an authenticator. */
export async function memberHasSecondFactor(db: Queryable, memberId: string): Promise<boolean> {
  return Boolean((await findPersonOfMember(db, memberId))?.totp_enabled_at);
}

/**
 * Creates a person; returns whether it was created (false: the e-mail belongs to someone already).
 * `email_verified_at`: when the way they came proved their mailbox (SSO, a sign-up link); left out for an invitation.
 */
export async function insertUser(
  db: Queryable,
  user: { id: string; email: string; name: string | null; created_at: Date; email_verified_at?: Date },
): Promise<boolean> {
  const rows = await db('users').insert(user).onConflict('email').ignore().returning('id');
  return rows.length > 0;
}

export async function updatePasswordHash(db: Queryable, userId: string, passwordHash: string): Promise<void> {
  await db('users').where('id', userId).update({ password_hash: passwordHash });
}

/** Gives the person a name when they have none. */
export async function nameUserIfUnnamed(db: Queryable, userId: string, name: string): Promise<void> {
  await db('users').where('id', userId).whereNull('name').update({ name });
}

/** What enrolling, confirming, turning off or renewing a second factor writes. */
export interface SecondFactorChange {
  totp_secret?: string | null;
  totp_enabled_at?: Date | null;
  totp_last_step?: number | null;
  /** sha256 hashes of the recovery codes. */
  recovery_codes?: string[];
}

export async function updateSecondFactor(db: Queryable, userId: string, change: SecondFactorChange): Promise<void> {
  const { recovery_codes: codes, ...rest } = change;
  await db('users')
    .where('id', userId)
    .update({ ...rest, ...(codes ? { recovery_codes: JSON.stringify(codes) } : {}) });
}

/** Spends a TOTP time step: true only when no later or equal step was spent before (a code works once). */
export async function spendTotpStep(db: Queryable, userId: string, step: number): Promise<boolean> {
  const spent = await db('users')
    .where('id', userId)
    .where((q) => q.whereNull('totp_last_step').orWhere('totp_last_step', '<', step))
    .update({ totp_last_step: step });
  return spent === 1;
}

/** Spends a recovery code by its hash: true only for the one request that removed it. */
export async function spendRecoveryCodeHash(db: Queryable, userId: string, hash: string): Promise<boolean> {
  const spent = await db('users')
    .where('id', userId)
    // not a payload: recovery_codes is a list of sha256 hashes
    .whereRaw('recovery_codes @> ?::jsonb', [JSON.stringify([hash])])
    .update({ recovery_codes: db.raw('recovery_codes - ?::text', [hash]) });
  return spent === 1;
}

/** Reset links of the person still valid at `now`. */
export async function countLivePasswordResets(db: Queryable, userId: string, now: Date): Promise<number> {
  const rows = await db('password_resets')
    .where('user_id', userId)
    .where('expires_at', '>', now)
    .count<{ n: string }[]>('token_hash as n');
  return Number(rows[0]?.n ?? 0);
}

export async function insertPasswordReset(
  db: Queryable,
  reset: { token_hash: string; user_id: string; expires_at: Date },
): Promise<void> {
  await db('password_resets').insert(reset);
}

/** Spends a reset link (once, unexpired); the person it was for, or undefined. */
export async function spendPasswordReset(db: Queryable, tokenHash: string, now: Date): Promise<string | undefined> {
  const [reset] = await db('password_resets')
    .where('token_hash', tokenHash)
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ used_at: now })
    .returning('user_id');
  return reset?.user_id as string | undefined;
}

/** Ends every console session of the person, in every account. */
export async function endSessionsOfUser(db: Queryable, userId: string): Promise<void> {
  const memberIds = db('members').where('user_id', userId).select('id');
  await db('console_sessions').whereIn('member_id', memberIds).delete();
}

/** What a person holds that proving their mailbox may take away, read under a row lock (to change it next). */
export interface UnprovenPerson {
  email_verified_at: Date | null;
  password_hash: string | null;
  totp_secret: string | null;
  totp_enabled_at: Date | null;
  recovery_codes: string[];
}

export async function lockPersonCredentials(db: Queryable, userId: string): Promise<UnprovenPerson | undefined> {
  return db('users')
    .where('id', userId)
    .forUpdate()
    .first('email_verified_at', 'password_hash', 'totp_secret', 'totp_enabled_at', 'recovery_codes');
}

/**
 * Marks the person's mailbox proven at `now` (when it was not yet), removing with it what `remove` names: the
 * password, the authenticator (its secret, enrolment and last step) and the recovery codes.
 */
export async function markEmailVerified(
  db: Queryable,
  userId: string,
  now: Date,
  remove: { password?: boolean; secondFactor?: boolean } = {},
): Promise<void> {
  await db('users')
    .where('id', userId)
    .whereNull('email_verified_at')
    .update({
      email_verified_at: now,
      ...(remove.password ? { password_hash: null } : {}),
      ...(remove.secondFactor
        ? { totp_secret: null, totp_enabled_at: null, totp_last_step: null, recovery_codes: JSON.stringify([]) }
        : {}),
    });
}

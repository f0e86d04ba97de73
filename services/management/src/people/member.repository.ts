import type { Knex } from 'knex';
import { type Queryable } from '@intake/shared/base';
import { normaliseEmail } from '@intake/shared/contracts';
import { type Role } from '@intake/shared/auth';

export interface MemberRow {
  id: string;
  account_id: string;
  email: string;
  user_id: string | null;
  role: Role;
  /** The projects the member is limited to; null: the whole account. */
  project_ids: string[] | null;
  status: 'invited' | 'active';
  created_at: Date;
  last_sign_in_at: Date | null;
  name: string | null;
}

const COLUMNS = [
  'm.id',
  'm.account_id',
  'm.email',
  'm.user_id',
  'm.role',
  'm.project_ids',
  'm.status',
  'm.created_at',
  'm.last_sign_in_at',
  'u.name',
];

export function listMembers(db: Queryable, accountId: string): Promise<MemberRow[]> {
  return db('members as m')
    .leftJoin('users as u', 'u.id', 'm.user_id')
    .where('m.account_id', accountId)
    .orderBy([{ column: 'm.created_at' }, { column: 'm.id' }])
    .select(COLUMNS);
}

export function findMember(db: Queryable, accountId: string, id: string): Promise<MemberRow | undefined> {
  return db('members as m')
    .leftJoin('users as u', 'u.id', 'm.user_id')
    .where({ 'm.account_id': accountId, 'm.id': id })
    .first(COLUMNS);
}

/** A member as audit entries and sessions name them, by id alone (the session's own member). */
export function findMemberById(
  db: Queryable,
  id: string,
): Promise<{ id: string; account_id: string; email: string; user_id: string | null } | undefined> {
  return db('members').where('id', id).first('id', 'account_id', 'email', 'user_id');
}

/** Serialises member changes per account, so "one owner is always left" holds under concurrent requests. */
export async function lockMembers(trx: Knex.Transaction, accountId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`members:${accountId}`]);
}

/** Owners who have joined: an invitation to be owner is no owner until it is accepted. */
export async function countActiveOwners(trx: Queryable, accountId: string): Promise<number> {
  const row = await trx('members')
    .where({ account_id: accountId, role: 'owner', status: 'active' })
    .count<{ n: string }[]>('id as n');
  return Number(row[0]?.n ?? 0);
}

export async function isMemberEmail(db: Queryable, accountId: string, email: string): Promise<boolean> {
  return Boolean(await db('members').where({ account_id: accountId, email }).first('id'));
}

/** Adds a member (invited, or active with its person when `status` says so); false when the e-mail is one already. */
export async function insertMember(
  db: Queryable,
  member: {
    id: string;
    account_id: string;
    email: string;
    role: Role;
    project_ids?: string[] | null;
    status: 'invited' | 'active';
    created_at: Date;
    user_id: string | null;
  },
): Promise<boolean> {
  const rows = await db('members').insert(member).onConflict(['account_id', 'email']).ignore().returning('id');
  return rows.length > 0;
}

export async function updateMemberRole(
  db: Queryable,
  id: string,
  role: Role,
  projectIds: string[] | null,
): Promise<void> {
  await db('members').where({ id }).update({ role, project_ids: projectIds });
}

/** Removes a member; their sessions end with the row (the foreign key cascades). */
export async function deleteMember(db: Queryable, id: string): Promise<void> {
  await db('members').where({ id }).delete();
}

/** The member joined: active, and the person behind it. */
export async function activateMember(db: Queryable, id: string, userId: string): Promise<void> {
  await db('members').where('id', id).update({ status: 'active', user_id: userId });
}

export async function markSignedIn(db: Queryable, id: string, now: Date): Promise<void> {
  await db('members').where('id', id).update({ last_sign_in_at: now });
}

export async function insertInvitation(
  db: Queryable,
  invitation: { token_hash: string; member_id: string; expires_at: Date },
): Promise<void> {
  await db('member_invitations').insert(invitation);
}

/** The member an unused, unexpired invitation names (with its account), by the sha256 of its token. */
export function findInvitationByHash(db: Queryable, tokenHash: string, now: Date) {
  return db('member_invitations as i')
    .join('members as m', 'm.id', 'i.member_id')
    .where('i.token_hash', tokenHash)
    .whereNull('i.used_at')
    .where('i.expires_at', '>', now)
    .first('i.token_hash', 'm.id', 'm.account_id', 'm.email', 'm.role', 'm.status', 'm.project_ids');
}

/** The account's name and, by name, those of `projectIds` among its projects: what an invitation is to. */
export async function findInvitationNames(
  db: Queryable,
  accountId: string,
  projectIds: string[],
): Promise<{ account: string | undefined; projects: string[] }> {
  const account: { name: string } | undefined = await db('accounts').where({ id: accountId }).first('name');
  const projects: { name: string }[] =
    projectIds.length > 0
      ? await db('projects').where({ account_id: accountId }).whereIn('id', projectIds).orderBy('name').select('name')
      : [];
  return { account: account?.name, projects: projects.map((p) => p.name) };
}

/** Spends an invitation (once: a concurrent acceptance finds it used); whether this call spent it. */
export async function spendInvitation(db: Queryable, tokenHash: string, now: Date): Promise<boolean> {
  const spent = await db('member_invitations').where('token_hash', tokenHash).whereNull('used_at').update({
    used_at: now,
  });
  return spent === 1;
}

/**
 * Takes one of an invitation's `limit` tries before a password or code is checked against it, so that concurrent
 * guesses cannot all pass a count none has added to yet: false when the invitation is spent, or its tries are all
 * used or in flight. A right answer gives the try back (releaseInvitationTry); a wrong one keeps it (spendIfTried).
 */
export async function reserveInvitationTry(db: Queryable, tokenHash: string, limit: number): Promise<boolean> {
  const updated = await db('member_invitations')
    .where('token_hash', tokenHash)
    .whereNull('used_at')
    .where('failed_attempts', '<', limit)
    .increment('failed_attempts', 1);
  return updated > 0;
}

/** Gives back a try taken by reserveInvitationTry: what it guarded was right (or not checked). */
export async function releaseInvitationTry(db: Queryable, tokenHash: string): Promise<void> {
  await db('member_invitations')
    .where('token_hash', tokenHash)
    .where('failed_attempts', '>', 0)
    .decrement('failed_attempts', 1);
}

/** After a wrong try: spends the invitation once `limit` wrong tries are kept; whether this call spent it. */
export async function spendIfTried(
  db: Queryable,
  tokenHash: string,
  props: { limit: number; now: Date },
): Promise<boolean> {
  const updated = await db('member_invitations')
    .where('token_hash', tokenHash)
    .whereNull('used_at')
    .where('failed_attempts', '>=', props.limit)
    .update({ used_at: props.now });
  return updated > 0;
}

/** The names of the accounts whose unused, unexpired invitations wait for `email`. */
export async function pendingInvitations(db: Queryable, email: string, now: Date): Promise<string[]> {
  return db('members as m')
    .join('member_invitations as i', 'i.member_id', 'm.id')
    .join('accounts as a', 'a.id', 'm.account_id')
    .where({ 'm.email': normaliseEmail(email), 'm.status': 'invited' })
    .whereNull('i.used_at')
    .where('i.expires_at', '>', now)
    .distinct('a.name')
    .orderBy('a.name')
    .pluck('a.name');
}

/** The console sessions of a member (complete ones), newest first. */
export function listMemberSessions(db: Queryable, memberId: string) {
  return db('console_sessions')
    .where({ member_id: memberId, two_factor_pending: false })
    .orderBy('created_at', 'desc')
    .select('token_hash', 'created_at', 'last_seen_at', 'ip', 'user_agent');
}

/** Ends the member's session whose id (the first `chars` of its token hash) is `id`; whether there was one. */
export async function endMemberSession(
  db: Queryable,
  props: { memberId: string; id: string; chars: number },
): Promise<boolean> {
  const ended = await db('console_sessions')
    .where('member_id', props.memberId)
    .whereRaw('left(token_hash, ?) = ?', [props.chars, props.id])
    .delete();
  return ended > 0;
}

/** Spends every unused invitation link of the member (a link sent again replaces them); how many. */
export async function spendInvitationsOf(db: Queryable, memberId: string, now: Date): Promise<number> {
  return db('member_invitations').where('member_id', memberId).whereNull('used_at').update({ used_at: now });
}

/** Whether anyone has joined any account here (a member with a person): the sign-in page offers passwords from then on. */
export async function anyMemberJoined(db: Queryable): Promise<boolean> {
  return (await db('members').where('status', 'active').first(db.raw('1 AS one'))) !== undefined;
}

import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { Db, Queryable } from '../base/db';
import { problem } from '../contracts/problems';
import { sha256Hex } from '../base/secrets';
import type { Principal, SessionInfo } from './api-keys';
import type { Role } from './roles';

export type { SessionInfo } from './api-keys';

/**
 * Console sessions: the console exchanges a management key for a session cookie, so the key never
 * stays where page scripts can read it. The cookie authenticates the same management routes a key
 * does; a state-changing request with it must also carry the session's CSRF token in a header.
 */
export const SESSION_COOKIE = 'intake_session';
export const CSRF_HEADER = 'x-csrf-token';
/** A session ends after this long without a request. */
export const SESSION_IDLE_MS = 30 * 60_000;
/** And this long after sign-in, whatever happens. */
export const SESSION_ABSOLUTE_MS = 12 * 3_600_000;
/** `last_seen_at` is refreshed at most this often, so a busy console costs no write per request. */
const TOUCH_RESOLUTION_MS = 60_000;

/** Who a session is for: a management key's principal, or a member (with the request's address and agent). */
export type SessionOwner =
  | { kind: 'key'; principal: Principal }
  | { kind: 'member'; accountId: string; memberId: string; twoFactorPending?: boolean; secondFactor?: boolean };

/** Opens a session; the token goes in the cookie, its hash in the table. */
export async function openSession(
  db: Queryable,
  owner: Principal | SessionOwner,
  now: Date,
  client: { ip?: string; userAgent?: string } = {},
): Promise<{ token: string; session: SessionInfo }> {
  const who: SessionOwner = 'kind' in owner ? owner : { kind: 'key', principal: owner };
  const accountId = who.kind === 'key' ? who.principal.accountId : who.accountId;
  const secondFactor = who.kind === 'member' && who.secondFactor === true;
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  const expiresAt = new Date(now.getTime() + SESSION_ABSOLUTE_MS);
  await db('console_sessions').where('account_id', accountId).andWhere('expires_at', '<=', now).delete();
  await db('console_sessions').insert({
    token_hash: sha256Hex(token),
    account_id: accountId,
    key_id: who.kind === 'key' ? who.principal.keyId : null,
    member_id: who.kind === 'member' ? who.memberId : null,
    two_factor_pending: who.kind === 'member' && who.twoFactorPending === true,
    second_factor: secondFactor,
    ip: client.ip?.slice(0, 100) ?? null,
    user_agent: client.userAgent?.slice(0, 300) ?? null,
    csrf_token: csrfToken,
    created_at: now,
    last_seen_at: now,
    expires_at: expiresAt,
  });
  return {
    token,
    session: {
      tokenHash: sha256Hex(token),
      csrfToken,
      createdAt: now,
      expiresAt,
      idleExpiresAt: new Date(Math.min(expiresAt.getTime(), now.getTime() + SESSION_IDLE_MS)),
      secondFactor,
    },
  };
}

const ended = () => problem('unauthorized', 'The console session has expired or was ended; sign in again');

interface SessionRow {
  account_id: string;
  key_id: string | null;
  member_id: string | null;
  csrf_token: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  two_factor_pending: boolean;
  second_factor: boolean;
  revoked_at: Date | null;
  type: string | null;
  key_role: string | null;
  key_label: string | null;
  member_role: string | null;
  member_email: string | null;
  member_project_ids: string[] | null;
  key_project_ids: string[] | null;
}

/** The session row with what it stands for now: its key (revoked?, role) or its member (role, e-mail). */
function findSessionRow(db: Db, tokenHash: string): Promise<SessionRow | undefined> {
  return db('console_sessions as s')
    .leftJoin('api_keys as k', 'k.id', 's.key_id')
    .leftJoin('members as m', 'm.id', 's.member_id')
    .where('s.token_hash', tokenHash)
    .first(
      's.account_id',
      's.key_id',
      's.member_id',
      's.csrf_token',
      's.created_at',
      's.last_seen_at',
      's.expires_at',
      's.two_factor_pending',
      's.second_factor',
      'k.revoked_at',
      'k.type',
      db.raw(`coalesce(k.role, 'admin') as key_role`),
      db.raw('coalesce(k.name, k.prefix) as key_label'),
      'm.role as member_role',
      'm.project_ids as member_project_ids',
      'k.project_ids as key_project_ids',
      'm.email as member_email',
    );
}

/** A key session whose key is gone, revoked or not a management key, or a member session whose member is gone, is over. */
function sessionOwnerGone(row: SessionRow): boolean {
  if (row.member_id !== null) return row.member_role === null;
  return row.type !== 'management' || row.revoked_at !== null;
}

/** The principal a live session row stands for: the member's role as it is now, or the key's. */
function principalOf(row: SessionRow): Principal {
  if (row.member_id !== null)
    return {
      accountId: row.account_id,
      keyId: null,
      type: 'management',
      role: row.member_role as Role,
      projectIds: row.member_project_ids,
      memberId: row.member_id,
      actor: { type: 'member', id: row.member_id, label: row.member_email },
    };
  return {
    accountId: row.account_id,
    keyId: row.key_id,
    type: 'management',
    role: row.key_role as Role,
    projectIds: row.key_project_ids,
    actor: { type: 'api_key', id: row.key_id, label: row.key_label },
  };
}

/**
 * The principal of a live session: unknown, expired (idle or absolute), revoked-key, removed-member and
 * half-open (second factor still due) sessions are 401. The member's role is read on every request, so a
 * role change takes effect at once. Only the second-factor routes pass `allowPending`: a half-open session
 * reaches nothing else.
 */
export async function authenticateSession(
  db: Db,
  token: string,
  now: Date = new Date(),
  options: { allowPending?: boolean } = {},
): Promise<Principal & { session: SessionInfo; twoFactorPending: boolean }> {
  if (token.length > 100) throw ended();
  const tokenHash = sha256Hex(token);
  const row = await findSessionRow(db, tokenHash);
  if (!row || (row.two_factor_pending && options.allowPending !== true)) throw ended();
  const lastSeen = new Date(row.last_seen_at).getTime();
  const expiresAt = new Date(row.expires_at);
  if (sessionOwnerGone(row) || expiresAt.getTime() <= now.getTime() || lastSeen + SESSION_IDLE_MS <= now.getTime()) {
    await db('console_sessions').where('token_hash', tokenHash).delete();
    throw ended();
  }
  const touch = now.getTime() - lastSeen >= TOUCH_RESOLUTION_MS;
  if (touch) await db('console_sessions').where('token_hash', tokenHash).update({ last_seen_at: now });
  const seen = touch ? now.getTime() : lastSeen;
  return {
    ...principalOf(row),
    twoFactorPending: row.two_factor_pending,
    session: {
      tokenHash,
      csrfToken: row.csrf_token,
      createdAt: new Date(row.created_at),
      expiresAt,
      idleExpiresAt: new Date(Math.min(expiresAt.getTime(), seen + SESSION_IDLE_MS)),
      secondFactor: row.second_factor,
    },
  };
}

/** Marks a session as having passed a second factor (its person just proved one, e.g. by confirming enrolment). */
export async function markSecondFactor(db: Db, tokenHash: string): Promise<void> {
  await db('console_sessions').where('token_hash', tokenHash).update({ second_factor: true });
}

export async function endSession(db: Queryable, tokenHash: string): Promise<void> {
  await db('console_sessions').where('token_hash', tokenHash).delete();
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Authenticates the session cookie of a request; state-changing methods must echo the CSRF token in a header. */
export async function requireSession(db: Db, ctx: Context, token: string): Promise<Principal> {
  const principal = await authenticateSession(db, token);
  checkCsrf(ctx, principal.session);
  return principal;
}

/** A state-changing request with a session cookie must echo the session's CSRF token in a header. */
export function checkCsrf(ctx: Context, session: SessionInfo): void {
  if (SAFE_METHODS.has(ctx.method)) return;
  const sent = Buffer.from(ctx.get(CSRF_HEADER));
  const expected = Buffer.from(session.csrfToken);
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected))
    throw problem('csrf-failed', `A request that changes something with the session cookie must send ${CSRF_HEADER}`);
}

/** The Set-Cookie value: HttpOnly, SameSite=Strict, Secure when served over https (directly or behind a proxy). */
export function sessionCookie(token: string | undefined, secure: boolean): string {
  const parts = [
    `${SESSION_COOKIE}=${token ?? ''}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    token ? `Max-Age=${SESSION_ABSOLUTE_MS / 1000}` : 'Max-Age=0',
  ];
  if (secure) parts.push('Secure');
  return parts.join('; ');
}

/** Deletes every ended session (past its absolute or idle expiry); returns how many. */
export async function sweepSessions(db: Db, now: Date): Promise<number> {
  return db('console_sessions')
    .where('expires_at', '<=', now)
    .orWhere('last_seen_at', '<=', new Date(now.getTime() - SESSION_IDLE_MS))
    .delete();
}

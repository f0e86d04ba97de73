import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { Db } from '../base/db';
import { problem } from '../contracts/problems';
import { sha256Hex } from '../base/secrets';
import type { Principal, SessionInfo } from './api-keys';

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

/** Opens a session for an authenticated management key; the token goes in the cookie, its hash in the table. */
export async function openSession(
  db: Db,
  principal: Principal,
  now: Date,
): Promise<{ token: string; session: SessionInfo }> {
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  const expiresAt = new Date(now.getTime() + SESSION_ABSOLUTE_MS);
  await db('console_sessions').where('account_id', principal.accountId).andWhere('expires_at', '<=', now).delete();
  await db('console_sessions').insert({
    token_hash: sha256Hex(token),
    account_id: principal.accountId,
    key_id: principal.keyId,
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
    },
  };
}

const ended = () => problem('unauthorized', 'The console session has expired or was ended; sign in again');

/** The principal of a live session: unknown, expired (idle or absolute) or revoked-key sessions are 401. */
export async function authenticateSession(
  db: Db,
  token: string,
  now: Date = new Date(),
): Promise<Principal & { session: SessionInfo }> {
  if (token.length > 100) throw ended();
  const tokenHash = sha256Hex(token);
  const row = await db('console_sessions as s')
    .join('api_keys as k', 'k.id', 's.key_id')
    .where('s.token_hash', tokenHash)
    .first(
      's.account_id',
      's.key_id',
      's.csrf_token',
      's.created_at',
      's.last_seen_at',
      's.expires_at',
      'k.revoked_at',
      'k.type',
    );
  if (!row) throw ended();
  const lastSeen = new Date(row.last_seen_at).getTime();
  const expiresAt = new Date(row.expires_at);
  if (
    row.revoked_at !== null ||
    row.type !== 'management' ||
    expiresAt.getTime() <= now.getTime() ||
    lastSeen + SESSION_IDLE_MS <= now.getTime()
  ) {
    await db('console_sessions').where('token_hash', tokenHash).delete();
    throw ended();
  }
  const touch = now.getTime() - lastSeen >= TOUCH_RESOLUTION_MS;
  if (touch) await db('console_sessions').where('token_hash', tokenHash).update({ last_seen_at: now });
  const seen = touch ? now.getTime() : lastSeen;
  return {
    accountId: row.account_id,
    keyId: row.key_id,
    type: 'management',
    session: {
      tokenHash,
      csrfToken: row.csrf_token,
      createdAt: new Date(row.created_at),
      expiresAt,
      idleExpiresAt: new Date(Math.min(expiresAt.getTime(), seen + SESSION_IDLE_MS)),
    },
  };
}

export async function endSession(db: Db, tokenHash: string): Promise<void> {
  await db('console_sessions').where('token_hash', tokenHash).delete();
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Authenticates the session cookie of a request; state-changing methods must echo the CSRF token in a header. */
export async function requireSession(db: Db, ctx: Context, token: string): Promise<Principal> {
  const principal = await authenticateSession(db, token);
  if (!SAFE_METHODS.has(ctx.method)) {
    const sent = Buffer.from(ctx.get(CSRF_HEADER));
    const expected = Buffer.from(principal.session.csrfToken);
    if (sent.length !== expected.length || !timingSafeEqual(sent, expected))
      throw problem('csrf-failed', `A request that changes something with the session cookie must send ${CSRF_HEADER}`);
  }
  return principal;
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

import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import { type Db } from '@intake/shared/base';
import { problem, toTimestamp } from '@intake/shared/contracts';
import {
  authenticateKey,
  authenticateSession,
  endSession,
  openSession,
  sessionCookie,
  SESSION_IDLE_MS,
  type Principal,
  type SessionInfo,
} from '@intake/shared/auth';
import { route, routeGroup, type ResponseDef } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { auditOf } from '../platform/audit-trail';
import { Timestamp } from '../platform/schemas';

export const SessionSchema = Type.Object(
  {
    account_id: Type.String(),
    key_id: Type.Union([Type.String(), Type.Null()], {
      description: 'the management key the session was opened with (revoking it ends the session); null for a member',
    }),
    member_id: Type.Union([Type.String(), Type.Null()], {
      description: 'the member signed in (removing them ends the session); null for a key session',
    }),
    email: Type.Union([Type.String(), Type.Null()], { description: 'the signed-in member’s e-mail' }),
    role: Type.Union([Type.Literal('viewer'), Type.Literal('editor'), Type.Literal('admin'), Type.Literal('owner')], {
      description: 'what this session may do, as it is now',
    }),
    project_ids: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description: 'the projects the role is limited to, as it is now; null: the whole account',
    }),
    csrf_token: Type.String({ description: 'send as `x-csrf-token` with every state-changing request' }),
    created_at: Timestamp,
    expires_at: Type.String({ format: 'date-time', description: 'absolute end, 12 hours after sign-in' }),
    idle_expires_at: Type.String({
      format: 'date-time',
      description: `the session ends if no request comes before this (${SESSION_IDLE_MS / 60_000} minutes of inactivity)`,
    }),
  },
  { additionalProperties: false },
);

export function presentSession(principal: Principal, session: SessionInfo) {
  return {
    account_id: principal.accountId,
    key_id: principal.keyId,
    member_id: principal.memberId ?? null,
    email: principal.memberId ? principal.actor.label : null,
    role: principal.role,
    project_ids: principal.projectIds,
    csrf_token: session.csrfToken,
    created_at: toTimestamp(session.createdAt),
    expires_at: toTimestamp(session.expiresAt),
    idle_expires_at: toTimestamp(session.idleExpiresAt),
  };
}

/** Secure cookies when the console is reached over https, directly, through a trusted proxy, or by its public URL. */
export const secure = (ctx: Context, baseUrl: string) => ctx.secure || baseUrl.startsWith('https:');

/** The answer that opens a console session: the session, and its cookie. */
export const SessionOpened = (description: string): ResponseDef => ({
  description,
  schema: SessionSchema,
  headers: { 'Set-Cookie': { description: 'the session cookie', schema: Type.String() } },
});

/** The session a token just opened, as the API presents it. */
export async function presentOpenedSession(db: Db, token: string, now: Date) {
  const principal = await authenticateSession(db, token, now);
  return presentSession(principal, principal.session);
}

/** Sets the cookie of a session just opened, on an answer never cached. */
export function setSessionCookie(ctx: Context, token: string, baseUrl: string): void {
  ctx.set('Set-Cookie', sessionCookie(token, secure(ctx, baseUrl)));
  ctx.set('Cache-Control', 'no-store');
}

export const TAGS = ['Console sessions'];
const currentSessionRoute = routeGroup({ tags: TAGS, auth: 'management', role: 'viewer' });
const noSession = () => problem('not-found', 'This request was authenticated with a key, not a console session cookie');

/** `POST /v1/sessions`: the console's sign-in, a management key exchanged for a session cookie. */
export const createSessionRoute = route({
  method: 'POST',
  path: '/v1/sessions',
  operationId: 'createSession',
  summary: 'Sign in to the console: exchange a management key for a session cookie',
  description:
    'Sets `intake_session` (HttpOnly, SameSite=Strict, Secure over https). The cookie then authenticates every ' +
    'management route; state-changing requests must also send `x-csrf-token`. The session ends after 30 minutes ' +
    'idle, 12 hours after sign-in, at sign-out, or when its key is revoked.',
  tags: TAGS,
  auth: 'none',
  body: Type.Object(
    { key: Type.String({ minLength: 1, maxLength: 200, description: 'a management key, `svc_mgmt_...`' }) },
    { additionalProperties: false },
  ),
  responses: {
    201: SessionOpened('Signed in'),
  },
  problems: ['invalid-key', 'insufficient-scope'],
  async handler(ctx, { body }, platform: Platform) {
    const { db, clock, config } = platform;
    const principal = await authenticateKey(db, body.key.trim(), clock.now());
    if (principal.type !== 'management')
      throw problem('insufficient-scope', 'This is a submission key; sign in with a management key (svc_mgmt_...)');
    const { token, session } = await openSession(db, principal, clock.now());
    await auditOf(ctx, principal, platform).record(db, { action: 'session.signed_in', details: { method: 'key' } });
    setSessionCookie(ctx, token, config.PUBLIC_BASE_URL);
    ctx.status = 201;
    ctx.body = presentSession(principal, session);
  },
});

/** `GET /v1/sessions/current`. */
export const getCurrentSessionRoute = currentSessionRoute({
  method: 'GET',
  path: '/v1/sessions/current',
  operationId: 'getCurrentSession',
  summary: 'The console session of this request (with its CSRF token)',
  responses: { 200: { description: 'The session', schema: SessionSchema } },
  problems: ['not-found'],
  async handler(ctx, { principal }) {
    if (!principal.session) throw noSession();
    ctx.set('Cache-Control', 'no-store');
    ctx.body = presentSession(principal, principal.session);
  },
});

/** `DELETE /v1/sessions/current`: sign-out. */
export const deleteCurrentSessionRoute = currentSessionRoute({
  method: 'DELETE',
  path: '/v1/sessions/current',
  operationId: 'deleteCurrentSession',
  summary: 'Sign out: end the console session on the server and clear its cookie',
  responses: { 204: { description: 'Signed out' } },
  problems: ['not-found'],
  async handler(ctx, { principal }, platform: Platform) {
    if (!principal.session) throw noSession();
    const { tokenHash } = principal.session;
    await platform.db.transaction(async (trx) => {
      await endSession(trx, tokenHash);
      await auditOf(ctx, principal, platform).record(trx, { action: 'session.signed_out' });
    });
    ctx.set('Set-Cookie', sessionCookie(undefined, secure(ctx, platform.config.PUBLIC_BASE_URL)));
  },
});

/** The console's sign-in and sign-out, in the order the OpenAPI document lists them. */
export const sessionRoutes = [createSessionRoute, getCurrentSessionRoute, deleteCurrentSessionRoute];

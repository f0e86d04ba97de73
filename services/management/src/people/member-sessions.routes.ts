import { Type } from '@sinclair/typebox';
import { problem, toTimestamp } from '@intake/shared/contracts';
import { endSession, type Principal } from '@intake/shared/auth';
import { clientOf } from '@intake/shared/audit';
import { routeGroup } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { openMemberSession } from './sign-in';
import { endMemberSession, findMemberById, listMemberSessions } from './member.repository';
import { activeMemberships, memberHasSecondFactor } from './person.repository';
import { setSessionCookie, TAGS } from './sessions.routes';
import { List, NullableTimestamp, Timestamp } from '../platform/schemas';
import { auditOf } from '../platform/audit-trail';

const memberSessionRoute = routeGroup({ tags: TAGS, auth: 'management' });

/** A session is named by the start of its token's hash (the token itself is only in its cookie). */
const SESSION_ID_CHARS = 32;
const SessionIdParams = Type.Object({
  id: Type.String({ pattern: `^[0-9a-f]{${SESSION_ID_CHARS}}$`, description: 'a session id from the list' }),
});

function memberOf(principal: Principal): string {
  if (!principal.memberId || !principal.session)
    throw problem('not-found', 'This request was not made from a member’s console session');
  return principal.memberId;
}

/** The user behind a member (every session and membership of that person). */
async function userOf(platform: Platform, memberId: string): Promise<string> {
  const member = await findMemberById(platform.db, memberId);
  return member?.user_id as string;
}

/** `GET /v1/sessions`: the signed-in person's console sessions in this account. */
export const listMySessionsRoute = memberSessionRoute({
  method: 'GET',
  path: '/v1/sessions',
  operationId: 'listMySessions',
  summary: 'The signed-in member’s console sessions (to see and end the others)',
  responses: {
    200: {
      description: 'The sessions, newest first',
      schema: List(
        Type.Object({
          id: Type.String(),
          current: Type.Boolean(),
          created_at: Timestamp,
          last_seen_at: NullableTimestamp,
          ip: Type.Union([Type.String(), Type.Null()]),
          user_agent: Type.Union([Type.String(), Type.Null()]),
        }),
      ),
    },
  },
  problems: ['not-found'],
  async handler(ctx, { principal }, platform: Platform) {
    const memberId = memberOf(principal);
    const rows = await listMemberSessions(platform.db, memberId);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      data: rows.map((r) => ({
        id: (r.token_hash as string).slice(0, SESSION_ID_CHARS),
        current: r.token_hash === principal.session?.tokenHash,
        created_at: toTimestamp(r.created_at),
        last_seen_at: r.last_seen_at ? toTimestamp(r.last_seen_at) : null,
        ip: r.ip,
        user_agent: r.user_agent,
      })),
    };
  },
});

/** `DELETE /v1/sessions/:id`. */
export const endMySessionRoute = memberSessionRoute({
  method: 'DELETE',
  path: '/v1/sessions/:id',
  operationId: 'endMySession',
  summary: 'End one of the signed-in member’s other console sessions',
  // Anyone may end their own sessions.
  role: 'viewer',
  params: SessionIdParams,
  responses: { 204: { description: 'Ended' } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, platform: Platform) {
    const memberId = memberOf(principal);
    await platform.db.transaction(async (trx) => {
      if (!(await endMemberSession(trx, { memberId, id: params.id, chars: SESSION_ID_CHARS })))
        throw problem('not-found', 'No such session of yours');
      await auditOf(ctx, principal, platform).record(trx, {
        action: 'session.ended',
        target: { type: 'session', id: params.id },
      });
    });
  },
});

/** `GET /v1/sessions/accounts`: the accounts the signed-in person belongs to. */
export const myAccountsRoute = memberSessionRoute({
  method: 'GET',
  path: '/v1/sessions/accounts',
  operationId: 'listMyAccounts',
  summary: 'The accounts the signed-in person is a member of, to switch between',
  responses: {
    200: {
      description: 'The memberships',
      schema: List(
        Type.Object({ account_id: Type.String(), name: Type.String(), role: Type.String(), current: Type.Boolean() }),
      ),
    },
  },
  problems: ['not-found'],
  async handler(ctx, { principal }, platform: Platform) {
    const memberships = await activeMemberships(platform.db, await userOf(platform, memberOf(principal)));
    ctx.body = {
      data: memberships.map((m) => ({
        account_id: m.account_id,
        name: m.account_name,
        role: m.role,
        current: m.account_id === principal.accountId,
      })),
    };
  },
});

/** `POST /v1/sessions/switch`. */
export const switchAccountRoute = memberSessionRoute({
  method: 'POST',
  path: '/v1/sessions/switch',
  operationId: 'switchAccount',
  summary: 'Switch the console to another account of the signed-in person (a new session there; this one ends)',
  role: 'viewer',
  body: Type.Object({ account_id: Type.String({ maxLength: 40 }) }, { additionalProperties: false }),
  responses: { 204: { description: 'Switched: the new session’s cookie is set' } },
  problems: ['not-found', 'conflict'],
  async handler(ctx, { body, principal }, platform: Platform) {
    const memberships = await activeMemberships(platform.db, await userOf(platform, memberOf(principal)));
    const target = memberships.find((m) => m.account_id === body.account_id);
    if (!target) throw problem('not-found', 'You are not a member of that account');
    // A session whose sign-in never passed a second factor must not carry the person into an account that requires
    // one, whether or not the person has an authenticator: the proof belongs to the sign-in, not to the person.
    const proven = principal.session?.secondFactor === true;
    if (target.require_two_factor && !proven)
      throw problem(
        'conflict',
        (await memberHasSecondFactor(platform.db, principal.memberId as string))
          ? `${target.account_name} requires two-factor sign-in: sign out and sign in there with your authentication code`
          : `${target.account_name} requires two-factor sign-in: set up an authenticator on the Security page first`,
      );
    const now = platform.clock.now();
    await endSession(platform.db, principal.session?.tokenHash as string);
    const opened = await openMemberSession(platform.db, target, {
      client: clientOf(ctx),
      now,
      method: 'switch',
      details: { from_account: principal.accountId },
      secondFactor: proven,
    });
    setSessionCookie(ctx, opened.token, platform.config.PUBLIC_BASE_URL);
  },
});

export const memberSessionRoutes = [listMySessionsRoute, endMySessionRoute, myAccountsRoute, switchAccountRoute];

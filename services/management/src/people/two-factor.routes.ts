import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import { problem } from '@intake/shared/contracts';
import { authenticateSession, checkCsrf, endSession, markSecondFactor, SESSION_COOKIE } from '@intake/shared/auth';
import { clientOf } from '@intake/shared/audit';
import { route, routeGroup } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import {
  checkSecondFactor,
  confirmEnrolment,
  disableTwoFactor,
  renewRecoveryCodes,
  startEnrolment,
  twoFactorStatus,
  type Who,
} from './two-factor';
import { openMemberSession } from './sign-in';
import { findMemberById } from './member.repository';
import { memberHasSecondFactor } from './person.repository';
import { presentOpenedSession, SessionSchema, setSessionCookie, TAGS } from './sessions.routes';
import { NullableTimestamp } from '../platform/schemas';

const twoFactorRoute = routeGroup({ tags: ['Two-factor'], auth: 'none' });
const Code = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'the 6-digit code of the authenticator app, or an unused recovery code',
});
const SESSION_ONLY =
  'Needs a member’s console session cookie (and `x-csrf-token`); a management key cannot have a second factor.';

/**
 * A member's console session, full or half-open (password right, second factor due). These routes authenticate
 * the cookie themselves because a half-open session reaches them and nothing else; `enrolling` also lets in a
 * half-open session whose person has no authenticator yet (the account requires one).
 */
async function memberSession(ctx: Context, platform: Platform, allow: { pending: boolean; enrolling?: boolean }) {
  const token = ctx.cookies.get(SESSION_COOKIE);
  if (!token) throw problem('unauthorized', 'Sign in to the console first: this needs a member’s console session');
  const principal = await authenticateSession(platform.db, token, platform.clock.now(), { allowPending: true });
  checkCsrf(ctx, principal.session);
  if (!principal.memberId) throw problem('not-found', 'This session was opened with a key; keys have no second factor');
  const who: Who = { memberId: principal.memberId, accountId: principal.accountId };
  if (principal.twoFactorPending && !allow.pending) {
    const enrolling = allow.enrolling && !(await memberHasSecondFactor(platform.db, who.memberId));
    if (!enrolling) throw problem('unauthorized', 'Enter the code of your authenticator first');
  }
  return { principal, who };
}

/** Replaces a half-open session with a full one (a new token: the half-open one's is never promoted). */
async function completeSession(ctx: Context, platform: Platform, tokenHash: string, who: Who) {
  const now = platform.clock.now();
  const client = clientOf(ctx);
  await endSession(platform.db, tokenHash);
  const member = await findMemberById(platform.db, who.memberId);
  if (!member) throw problem('unauthorized', 'The console session has expired or was ended; sign in again');
  const opened = await openMemberSession(platform.db, member, {
    client,
    now,
    method: 'password',
    details: { two_factor: true },
    secondFactor: true,
  });
  setSessionCookie(ctx, opened.token, platform.config.PUBLIC_BASE_URL);
  return presentOpenedSession(platform.db, opened.token, now);
}

/** `POST /v1/sessions/two-factor`: the second step of a password sign-in. */
export const secondFactorRoute = route({
  method: 'POST',
  path: '/v1/sessions/two-factor',
  operationId: 'signInSecondFactor',
  summary: 'Finish a password sign-in with the authenticator’s code or a recovery code',
  description:
    'For the half-open session that `POST /v1/sessions/password` answered 202 (its cookie and `x-csrf-token`). A ' +
    'right code replaces it with a full session; a wrong one is a failed sign-in (401, counted in the same limits: ' +
    '429 with Retry-After). A code is accepted once; a recovery code too.',
  tags: TAGS,
  auth: 'none',
  body: Type.Object({ code: Code }, { additionalProperties: false }),
  responses: {
    201: {
      description: 'Signed in',
      schema: SessionSchema,
      headers: { 'Set-Cookie': { description: 'the new session cookie', schema: Type.String() } },
    },
  },
  problems: ['unauthorized', 'rate-limited', 'conflict', 'csrf-failed'],
  async handler(ctx, { body }, platform: Platform) {
    const { principal, who } = await memberSession(ctx, platform, { pending: true });
    if (!principal.twoFactorPending) throw problem('conflict', 'This session is signed in already');
    if (!(await checkSecondFactor(platform, who, body.code, clientOf(ctx))))
      throw problem('unauthorized', 'The code is wrong or was used already');
    ctx.body = await completeSession(ctx, platform, principal.session.tokenHash, who);
    ctx.status = 201;
  },
});

const StatusSchema = Type.Object({
  enabled: Type.Boolean(),
  enabled_at: NullableTimestamp,
  recovery_codes_left: Type.Integer({ description: 'unused recovery codes' }),
  required: Type.Boolean({ description: 'this account requires two-factor for password sign-in' }),
});

/** `GET /v1/two-factor`. */
export const twoFactorStatusRoute = twoFactorRoute({
  method: 'GET',
  path: '/v1/two-factor',
  operationId: 'getTwoFactor',
  summary: 'The signed-in member’s two-factor sign-in: on or off, recovery codes left, required here or not',
  description: SESSION_ONLY,
  responses: { 200: { description: 'The state', schema: StatusSchema } },
  problems: ['unauthorized', 'not-found'],
  async handler(ctx, _input, platform: Platform) {
    const { who } = await memberSession(ctx, platform, { pending: false, enrolling: true });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await twoFactorStatus(platform.db, who);
  },
});

/** `POST /v1/two-factor/enrolment`. */
export const startEnrolmentRoute = twoFactorRoute({
  method: 'POST',
  path: '/v1/two-factor/enrolment',
  operationId: 'startTwoFactorEnrolment',
  summary: 'Start enrolling an authenticator app: its secret as a QR code, an otpauth:// URI and a key to type',
  description: `${SESSION_ONLY} Nothing changes for sign-in until the enrolment is confirmed with a code.`,
  responses: {
    201: {
      description: 'The secret, shown this once',
      schema: Type.Object({
        secret: Type.String({ description: 'base32, for typing into the app' }),
        otpauth_uri: Type.String(),
        qr_code: Type.String({ description: 'the URI as a QR code: an SVG data URL' }),
        qr_modules: Type.Array(Type.String({ pattern: '^[01]+$' }), {
          description: 'the same QR code as data: one string per row of modules, `1` dark, `0` light (no quiet zone)',
        }),
      }),
    },
  },
  problems: ['unauthorized', 'not-found', 'conflict', 'csrf-failed'],
  async handler(ctx, _input, platform: Platform) {
    const { who } = await memberSession(ctx, platform, { pending: false, enrolling: true });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await startEnrolment(platform, who);
    ctx.status = 201;
  },
});

/** `POST /v1/two-factor/enrolment/confirm`. */
export const confirmEnrolmentRoute = twoFactorRoute({
  method: 'POST',
  path: '/v1/two-factor/enrolment/confirm',
  operationId: 'confirmTwoFactorEnrolment',
  summary: 'Turn two-factor on with a current code; answers 10 single-use recovery codes, this once',
  description:
    `${SESSION_ONLY} A half-open session of an account that requires two-factor becomes a full one here ` +
    '(`session`, with a new cookie).',
  body: Type.Object({ code: Code }, { additionalProperties: false }),
  responses: {
    200: {
      description: 'On',
      schema: Type.Object({
        recovery_codes: Type.Array(Type.String()),
        session: Type.Union([SessionSchema, Type.Null()], {
          description: 'the new session, when this finished a sign-in',
        }),
      }),
    },
  },
  problems: ['unauthorized', 'not-found', 'conflict', 'validation-failed', 'csrf-failed'],
  async handler(ctx, { body }, platform: Platform) {
    const { principal, who } = await memberSession(ctx, platform, { pending: false, enrolling: true });
    const codes = await confirmEnrolment(platform, who, body.code, clientOf(ctx));
    // Confirming proves the authenticator: a full session now counts as one that passed a second factor.
    const session = principal.twoFactorPending
      ? await completeSession(ctx, platform, principal.session.tokenHash, who)
      : await markSecondFactor(platform.db, principal.session.tokenHash).then(() => null);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { recovery_codes: codes, session };
  },
});

const Proof = Type.Object(
  { code: Type.Optional(Code), password: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })) },
  { additionalProperties: false, minProperties: 1 },
);

/** `POST /v1/two-factor/recovery-codes`. */
export const renewRecoveryCodesRoute = twoFactorRoute({
  method: 'POST',
  path: '/v1/two-factor/recovery-codes',
  operationId: 'renewRecoveryCodes',
  summary:
    'Ten new recovery codes, proven with a current code, a recovery code or the password; the old ones stop working',
  description: `${SESSION_ONLY} Wrong proofs count as failed sign-ins.`,
  body: Proof,
  responses: {
    200: {
      description: 'The new codes, shown this once',
      schema: Type.Object({ recovery_codes: Type.Array(Type.String()) }),
    },
  },
  problems: ['unauthorized', 'not-found', 'conflict', 'validation-failed', 'rate-limited', 'csrf-failed'],
  async handler(ctx, { body }, platform: Platform) {
    const { who } = await memberSession(ctx, platform, { pending: false });
    const codes = await renewRecoveryCodes(platform, who, body, clientOf(ctx));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { recovery_codes: codes };
  },
});

/** `POST /v1/two-factor/disable`. */
export const disableTwoFactorRoute = twoFactorRoute({
  method: 'POST',
  path: '/v1/two-factor/disable',
  operationId: 'disableTwoFactor',
  summary: 'Turn two-factor off, proven with a current code, a recovery code or the password',
  description: `${SESSION_ONLY} Refused (409) while an account of the person requires two-factor.`,
  body: Proof,
  responses: { 204: { description: 'Off' } },
  problems: ['unauthorized', 'not-found', 'conflict', 'validation-failed', 'rate-limited', 'csrf-failed'],
  async handler(ctx, { body }, platform: Platform) {
    const { who } = await memberSession(ctx, platform, { pending: false });
    await disableTwoFactor(platform, who, body, clientOf(ctx));
  },
});

export const twoFactorRoutes = [
  secondFactorRoute,
  twoFactorStatusRoute,
  startEnrolmentRoute,
  confirmEnrolmentRoute,
  renewRecoveryCodesRoute,
  disableTwoFactorRoute,
];

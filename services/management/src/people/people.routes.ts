import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import { type SessionInfo } from '@intake/shared/auth';
import { clientOf } from '@intake/shared/audit';
import { route, routeGroup } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import {
  acceptInvitation,
  describeInvitation,
  INVITATION_WRONG_TRIES,
  requestPasswordReset,
  resetPassword,
} from './credentials';
import { signInWithPassword } from './sign-in';
import { memberHasSecondFactor } from './person.repository';
import { anyMemberJoined } from './member.repository';
import { ssoConfigured } from './sso';
import { presentOpenedSession, SessionOpened, setSessionCookie, TAGS } from './sessions.routes';

const signInRoute = routeGroup({ tags: TAGS, auth: 'none' });

const Email = Type.String({ format: 'email', maxLength: 320 });
const Password = Type.String({ minLength: 1, maxLength: 1000 });
const Token = Type.String({ minLength: 1, maxLength: 200, description: 'the token after `#` in the link' });

/** Sets the session cookie and answers the session, as key sign-in does. */
async function answerSession(
  ctx: Context,
  platform: Platform,
  opened: { token: string; session: SessionInfo },
  status = 201,
) {
  setSessionCookie(ctx, opened.token, platform.config.PUBLIC_BASE_URL);
  ctx.status = status;
  ctx.body = await presentOpenedSession(platform.db, opened.token, platform.clock.now());
}

/** `GET /v1/sign-in-options`: what the console's sign-in page offers. */
export const signInOptionsRoute = signInRoute({
  method: 'GET',
  path: '/v1/sign-in-options',
  operationId: 'getSignInOptions',
  summary: 'The ways to sign in to the console here: password, SSO (OpenID Connect), management key',
  responses: {
    200: {
      description: 'The options',
      schema: Type.Object({
        password: Type.Boolean({
          description: 'e-mail and password (false with OIDC_ONLY, or before anyone has joined)',
        }),
        sso: Type.Boolean(),
        key: Type.Boolean(),
        account_creation: Type.Union([Type.Literal('operator'), Type.Literal('owners'), Type.Literal('anyone')], {
          description: 'who makes accounts here (ACCOUNT_CREATION); `anyone`: the sign-in page offers to sign up',
        }),
        members: Type.Boolean({
          description:
            'whether anyone has joined an account here: until then the only way in is a management key, which the ' +
            'operator makes with the CLI, and the console says so',
        }),
      }),
    },
  },
  async handler(ctx, _input, { config, db }: Platform) {
    const members = await anyMemberJoined(db);
    ctx.body = {
      password: members && !config.OIDC_ONLY,
      sso: ssoConfigured(config),
      key: true,
      account_creation: config.OIDC_ONLY && config.ACCOUNT_CREATION === 'anyone' ? 'owners' : config.ACCOUNT_CREATION,
      members,
    };
  },
});

/** `POST /v1/sessions/password`. */
export const passwordSignInRoute = signInRoute({
  method: 'POST',
  path: '/v1/sessions/password',
  operationId: 'signInWithPassword',
  summary: 'Sign in to the console with e-mail and password',
  description:
    'The same answer, in the same time, for an unknown e-mail and a wrong password (401). Failures are limited per ' +
    'e-mail and per client address (429 with Retry-After). With a second factor enrolled or required, the answer is ' +
    '202 `{ two_factor_required: true }` and the session is completed by `POST /v1/sessions/two-factor`.',
  body: Type.Object(
    {
      email: Email,
      password: Password,
      account_id: Type.Optional(
        Type.String({ maxLength: 40, description: 'sign in to this account (default: the last one)' }),
      ),
    },
    { additionalProperties: false },
  ),
  responses: {
    201: SessionOpened('Signed in'),
    202: {
      description: 'Password right; the second factor is due',
      schema: Type.Object({
        two_factor_required: Type.Literal(true),
        enrolment_required: Type.Boolean(),
        csrf_token: Type.String({ description: 'send as `x-csrf-token` with the second step' }),
      }),
    },
  },
  problems: ['unauthorized', 'rate-limited', 'forbidden'],
  async handler(ctx, { body }, platform: Platform) {
    const signed = await signInWithPassword({
      platform,
      email: body.email,
      password: body.password,
      accountId: body.account_id,
      client: clientOf(ctx),
      now: platform.clock.now(),
    });
    if (!signed.secondFactor) return answerSession(ctx, platform, signed);
    setSessionCookie(ctx, signed.token, platform.config.PUBLIC_BASE_URL);
    ctx.status = 202;
    ctx.body = {
      two_factor_required: true,
      enrolment_required: !(await memberHasSecondFactor(platform.db, signed.memberId)),
      csrf_token: signed.session.csrfToken,
    };
  },
});

/** `POST /v1/password-resets`. */
export const requestPasswordResetRoute = signInRoute({
  method: 'POST',
  path: '/v1/password-resets',
  operationId: 'requestPasswordReset',
  summary: 'Send a single-use password reset link (valid one hour) to this e-mail, if it is a person’s',
  description: 'Answers 202 at once whether or not the e-mail is known; the link is logged when SMTP is unset.',
  body: Type.Object({ email: Email }, { additionalProperties: false }),
  responses: { 202: { description: 'Accepted (sent if the e-mail is known)', schema: Type.Object({}) } },
  handler(ctx, { body }, platform: Platform) {
    requestPasswordReset(platform, body.email);
    ctx.status = 202;
    ctx.body = {};
  },
});

/** `POST /v1/password-resets/confirm`. */
export const confirmPasswordResetRoute = signInRoute({
  method: 'POST',
  path: '/v1/password-resets/confirm',
  operationId: 'confirmPasswordReset',
  summary: 'Choose a new password with a reset link’s token (every session of the person ends)',
  description:
    'The link proves the mailbox: when no one had proven this address before (a person made by an invitation ' +
    'link), the authenticator and recovery codes set up on it are removed too, audited as ' +
    '`member.credentials_removed` and said in a mail to the address.',
  body: Type.Object({ token: Token, password: Password }, { additionalProperties: false }),
  responses: { 204: { description: 'Changed; sign in with it' } },
  problems: ['link-expired'],
  async handler(ctx, { body }, platform: Platform) {
    await resetPassword(platform, body.token, body.password, clientOf(ctx));
  },
});

/** `POST /v1/invitations/lookup`. */
export const lookupInvitationRoute = route({
  method: 'POST',
  path: '/v1/invitations/lookup',
  operationId: 'lookupInvitation',
  summary: 'What an invitation link is for (its e-mail, role, account and projects), before accepting it',
  tags: ['Members'],
  auth: 'none',
  body: Type.Object({ token: Token }, { additionalProperties: false }),
  responses: {
    200: {
      description: 'The invitation',
      schema: Type.Object({
        email: Type.String(),
        role: Type.String(),
        account_name: Type.String(),
        project_names: Type.Array(Type.String(), {
          description:
            'the projects (clients) the member will see, by name, for a member limited to projects; empty: the ' +
            'whole account',
        }),
        password: Type.Boolean({
          description:
            'whether it may be accepted with a password here (false with OIDC_ONLY): the join page offers the ' +
            'password form on this, even on a new installation where no one has joined yet',
        }),
      }),
    },
  },
  problems: ['link-expired'],
  async handler(ctx, { body }, platform: Platform) {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await describeInvitation(platform, body.token);
  },
});

/** `POST /v1/invitations/accept`. */
export const acceptInvitationRoute = route({
  method: 'POST',
  path: '/v1/invitations/accept',
  operationId: 'acceptInvitation',
  summary: 'Accept an invitation with a password (new: at least 12 characters, not a common one) and sign in',
  description:
    'A sign-in: failures are limited per e-mail and per client address (429 with Retry-After) and audited as ' +
    '`session.sign_in_failed` in the person’s accounts; after ' +
    `${INVITATION_WRONG_TRIES} wrong passwords or codes the invitation is spent (410 \`link-expired\`). A person ` +
    'who has a password here already gives it, and with two-factor on also `code`: without it the answer is 202 ' +
    '`{ two_factor_required: true, enrolment_required: false }` and nothing is spent. When the account requires ' +
    'two-factor and the person has no authenticator, the answer is 202 with `enrolment_required: true` and a ' +
    'half-open session that can only enrol one (as for a password sign-in).',
  tags: ['Members'],
  auth: 'none',
  body: Type.Object(
    {
      token: Token,
      password: Password,
      code: Type.Optional(
        Type.String({ minLength: 1, maxLength: 64, description: 'the authenticator’s code or a recovery code' }),
      ),
      name: Type.Optional(Type.String({ maxLength: 200 })),
    },
    { additionalProperties: false },
  ),
  responses: {
    201: SessionOpened('Joined and signed in'),
    202: {
      description: 'Password right; a second factor is due (a code with the same request, or enrolment)',
      schema: Type.Object({
        two_factor_required: Type.Literal(true),
        enrolment_required: Type.Boolean(),
        csrf_token: Type.Optional(
          Type.String({ description: 'with enrolment: send as `x-csrf-token` with the enrolment calls' }),
        ),
      }),
    },
  },
  problems: ['link-expired', 'unauthorized', 'forbidden', 'rate-limited', 'validation-failed'],
  async handler(ctx, { body }, platform: Platform) {
    const accepted = await acceptInvitation({ platform, ...body, client: clientOf(ctx) });
    if (accepted.kind === 'signed-in') return answerSession(ctx, platform, accepted);
    ctx.status = 202;
    ctx.set('Cache-Control', 'no-store');
    if (accepted.kind === 'code-due') {
      ctx.body = { two_factor_required: true, enrolment_required: false };
      return;
    }
    setSessionCookie(ctx, accepted.token, platform.config.PUBLIC_BASE_URL);
    ctx.body = { two_factor_required: true, enrolment_required: true, csrf_token: accepted.session.csrfToken };
  },
});

export const peopleRoutes = [
  signInOptionsRoute,
  passwordSignInRoute,
  requestPasswordResetRoute,
  confirmPasswordResetRoute,
  lookupInvitationRoute,
  acceptInvitationRoute,
];

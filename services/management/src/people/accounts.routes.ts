import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import { clientOf } from '@intake/shared/audit';
import { route, routeGroup } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { confirmSignUp, createAccountAsOwner, requestSignUp } from './account-creation';
import { presentOpenedSession, SessionOpened, setSessionCookie, TAGS } from './sessions.routes';

const AccountName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'the account’s name' });

/** `POST /v1/accounts`: an owner makes another account. */
export const createAccountRoute = route({
  method: 'POST',
  path: '/v1/accounts',
  operationId: 'createAccount',
  summary: 'Create another account, owned by the person signed in (ACCOUNT_CREATION `owners` or `anyone`)',
  description:
    'An owner of the current account makes a new one on the free plan (the operator changes plans), with its default ' +
    'project, and becomes its owner; `POST /v1/sessions/switch` then opens it. A member’s session only (an account ' +
    'needs a person to own it: 403 for a key), and 403 when ACCOUNT_CREATION is `operator`.',
  tags: ['Account'],
  auth: 'management',
  role: 'owner',
  body: Type.Object({ name: AccountName }, { additionalProperties: false }),
  responses: {
    201: {
      description: 'Created; the person is its owner',
      schema: Type.Object({ account_id: Type.String(), name: Type.String() }, { additionalProperties: false }),
    },
  },
  problems: ['forbidden'],
  async handler(ctx, { body, principal }, platform: Platform) {
    ctx.status = 201;
    ctx.body = await createAccountAsOwner({ ...platform, principal, name: body.name.trim() });
  },
});

const signUpRoute = routeGroup({ tags: TAGS, auth: 'none' });

/** `POST /v1/sign-ups`. */
export const requestSignUpRoute = signUpRoute({
  method: 'POST',
  path: '/v1/sign-ups',
  operationId: 'requestSignUp',
  summary: 'Ask for an account (ACCOUNT_CREATION=anyone): a link to confirm the e-mail address is mailed there',
  description:
    'Nothing is made until the link (valid a day, once) is opened with `POST /v1/sign-ups/confirm`; the answer is ' +
    'the same whether or not the address is known. At most 3 links an hour per address and 10 per client address ' +
    '(429). 404 when sign-up is off (ACCOUNT_CREATION `operator` or `owners`, or OIDC_ONLY).',
  body: Type.Object(
    { email: Type.String({ format: 'email', maxLength: 320 }), account_name: AccountName },
    { additionalProperties: false },
  ),
  responses: { 202: { description: 'The link is on its way', schema: Type.Object({}) } },
  problems: ['not-found', 'rate-limited'],
  async handler(ctx, { body }, platform: Platform) {
    await requestSignUp({
      ...platform,
      email: body.email,
      accountName: body.account_name.trim(),
      client: clientOf(ctx),
    });
    ctx.status = 202;
    ctx.body = {};
  },
});

/** `POST /v1/sign-ups/confirm`. */
export const confirmSignUpRoute = signUpRoute({
  method: 'POST',
  path: '/v1/sign-ups/confirm',
  operationId: 'confirmSignUp',
  summary: 'Open a sign-up link: the account is made with this person its owner, and signed in',
  description:
    'A new person chooses a password (at least 12 characters, not the e-mail, not a common one); a person who ' +
    'already signs in here gives theirs, and their authentication `code` when they use two-factor (202 ' +
    '`{ two_factor_required: true }` until it comes). Wrong passwords count against the sign-in limits (401, then 429).',
  body: Type.Object(
    {
      token: Type.String({ minLength: 1, maxLength: 200, description: 'the token after `#` in the link' }),
      password: Type.String({ minLength: 1, maxLength: 1000 }),
      code: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
    },
    { additionalProperties: false },
  ),
  responses: {
    201: SessionOpened('Signed up and signed in'),
    202: {
      description: 'The password is right; the authentication code is due',
      schema: Type.Object({ two_factor_required: Type.Literal(true) }),
    },
  },
  problems: ['not-found', 'link-expired', 'unauthorized', 'rate-limited', 'validation-failed'],
  async handler(ctx: Context, { body }, platform: Platform) {
    const confirmed = await confirmSignUp({ ...platform, ...body, client: clientOf(ctx) });
    if (confirmed.kind === 'code-due') {
      ctx.status = 202;
      ctx.body = { two_factor_required: true };
      return;
    }
    setSessionCookie(ctx, confirmed.token, platform.config.PUBLIC_BASE_URL);
    ctx.status = 201;
    ctx.body = await presentOpenedSession(platform.db, confirmed.token, platform.clock.now());
  },
});

export const accountCreationRoutes = [createAccountRoute, requestSignUpRoute, confirmSignUpRoute];

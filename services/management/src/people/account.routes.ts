import { Type } from '@sinclair/typebox';
import { type Queryable } from '@intake/shared/base';
import { problem } from '@intake/shared/contracts';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { findAccountSettings, updateRequireTwoFactor } from './account.repository';
import { memberHasSecondFactor } from './person.repository';
import { auditOf } from '../platform/audit-trail';

const TAGS = ['Account'];

const AccountSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  require_two_factor: Type.Boolean({
    description: 'members signing in with a password must use a second factor (those without one enrol first)',
  }),
});

/** The principal's account (which exists while its key or session does). */
const presentAccount = async (db: Queryable, accountId: string) => (await findAccountSettings(db, accountId))!;

/** `GET /v1/account`. */
export const getAccountRoute = route({
  method: 'GET',
  path: '/v1/account',
  operationId: 'getAccount',
  summary: 'The account of this key or session, with its security settings',
  tags: TAGS,
  auth: 'management',
  responses: { 200: { description: 'The account', schema: AccountSchema } },
  async handler(ctx, { principal }, platform: Platform) {
    ctx.body = await presentAccount(platform.db, principal.accountId);
  },
});

/** `PATCH /v1/account`: owners only. */
export const updateAccountRoute = route({
  method: 'PATCH',
  path: '/v1/account',
  operationId: 'updateAccount',
  summary: 'Change the account’s security settings (owners): require two-factor for password sign-in',
  description:
    'Turning `require_two_factor` on needs the owner to have two-factor on themselves (409 otherwise), so nobody ' +
    'requires what they have not tried. Sessions already open stay open; the next password sign-in of a member ' +
    'without an authenticator can do nothing but enrol one.',
  tags: TAGS,
  auth: 'management',
  role: 'owner',
  body: Type.Object({ require_two_factor: Type.Boolean() }, { additionalProperties: false, minProperties: 1 }),
  responses: { 200: { description: 'The account as it is now', schema: AccountSchema } },
  problems: ['conflict'],
  async handler(ctx, { body, principal }, platform: Platform) {
    const { db } = platform;
    if (body.require_two_factor && !(await memberHasSecondFactor(db, principal.memberId ?? '')))
      throw problem('conflict', 'Turn on two-factor for yourself first, then require it for everyone');
    ctx.body = await db.transaction(async (trx) => {
      const before = await presentAccount(trx, principal.accountId);
      await updateRequireTwoFactor(trx, principal.accountId, body.require_two_factor);
      if (before.require_two_factor !== body.require_two_factor)
        await auditOf(ctx, principal, platform).record(trx, {
          action: 'account.two_factor_required',
          target: { type: 'account', id: principal.accountId },
          details: { require_two_factor: body.require_two_factor },
        });
      return presentAccount(trx, principal.accountId);
    });
  },
});

export const accountRoutes = [getAccountRoute, updateAccountRoute];

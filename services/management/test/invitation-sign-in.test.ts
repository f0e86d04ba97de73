import { generate } from 'otplib';
import { addTestMember, factories, uniqueEmail, useStarted } from '@intake/shared/testing';
import { INVITATION_WRONG_TRIES } from '../src/people/credentials';
import { SIGN_IN_LIMITS } from '../src/people/sign-in';
import { api, startManagement } from './helpers';
import { clientAddress, PASSWORD, personWithPassword, sessionOf } from './people-helpers';

const ctx = useStarted(() => startManagement({ TRUST_PROXY: true }));

type Headers = Record<string, string>;
const call = (method: string, path: string, body?: unknown, headers: Headers = {}) =>
  api(ctx.url)(method, path, body, headers);
const problemType = (slug: string) => `${ctx.platform.config.PROBLEMS_URL}/${slug}`;
const codeNow = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

/** The owner of an account that requires two-factor, enrolled, with the authenticator's secret. */
async function ownerWithTwoFactor() {
  const owner = await personWithPassword(ctx.platform.db, 'owner');
  const signed = await call('POST', '/v1/sessions/password', { email: owner.email, password: PASSWORD }, owner.from);
  const { headers } = sessionOf(signed);
  const started = await call('POST', '/v1/two-factor/enrolment', undefined, headers);
  const secret = started.body.secret as string;
  const confirmed = await call('POST', '/v1/two-factor/enrolment/confirm', { code: await codeNow(secret) }, headers);
  expect(confirmed.status).toBe(200);
  expect((await call('PATCH', '/v1/account', { require_two_factor: true }, headers)).status).toBe(200);
  return { ...owner, secret };
}

/** Another account whose admin key invites `email`: the invitation's token. */
async function invitedElsewhere(email: string, role = 'editor') {
  const other = await factories.account(ctx.platform.db);
  const invited = await api(ctx.url, other.managementKey)('POST', '/v1/members', { email, role });
  expect(invited.status).toBe(201);
  return {
    accountId: other.id,
    key: other.managementKey,
    token: (invited.body.invitation_url as string).split('#')[1] as string,
  };
}

const acceptWith = (token: string, body: Record<string, string>, from: Headers) =>
  call('POST', '/v1/invitations/accept', { token, ...body }, from);

describe('accepting an invitation with an existing password', () => {
  it('asks for the second factor of a person who has one, and only a session that passed it switches into an account that requires it', async () => {
    const owner = await ownerWithTwoFactor();
    const b = await invitedElsewhere(owner.email);
    const from = clientAddress();

    // The password alone: a code is due, no session, nothing spent.
    const passwordOnly = await acceptWith(b.token, { password: PASSWORD }, from);
    expect([passwordOnly.status, passwordOnly.body]).toEqual([
      202,
      { two_factor_required: true, enrolment_required: false },
    ]);
    expect(passwordOnly.headers.get('set-cookie')).toBeNull();
    expect((await call('POST', '/v1/invitations/lookup', { token: b.token })).status).toBe(200);

    const wrongCode = await acceptWith(b.token, { password: PASSWORD, code: '000000' }, from);
    expect([wrongCode.status, wrongCode.body.type]).toEqual([401, problemType('unauthorized')]);
    const failed = await ctx.platform
      .db('audit_log')
      .where({ account_id: owner.accountId, action: 'session.sign_in_failed' })
      .pluck('details');
    expect(failed).toContainEqual({ method: 'invitation', reason: 'second factor' });

    const joined = await acceptWith(b.token, { password: PASSWORD, code: await codeNow(owner.secret, 1) }, from);
    expect([joined.status, joined.body.account_id]).toEqual([201, b.accountId]);
    const switched = await call(
      'POST',
      '/v1/sessions/switch',
      { account_id: owner.accountId },
      sessionOf(joined).headers,
    );
    expect(switched.status).toBe(204);
  });

  it('never lets a session opened without a second factor switch into an account that requires one, even once its person has an authenticator', async () => {
    const strict = await personWithPassword(ctx.platform.db, 'owner');
    await ctx.platform.db('accounts').where('id', strict.accountId).update({ require_two_factor: true });
    // The same person in an account that does not require it, signed in there with the password alone.
    const lax = await invitedElsewhere(strict.email);
    const joinedLax = await acceptWith(lax.token, { password: PASSWORD }, strict.from);
    expect([joinedLax.status, joinedLax.body.account_id]).toEqual([201, lax.accountId]);
    const passwordOnly = sessionOf(joinedLax).headers;
    // Meanwhile, in a second session, the person turns two-factor on (that session passes it by confirming).
    const second = sessionOf(await acceptlessSignIn(strict.email, strict.from)).headers;
    const started = await call('POST', '/v1/two-factor/enrolment', undefined, second);
    const secret = started.body.secret as string;
    expect(
      (await call('POST', '/v1/two-factor/enrolment/confirm', { code: await codeNow(secret) }, second)).status,
    ).toBe(200);

    const refused = await call('POST', '/v1/sessions/switch', { account_id: strict.accountId }, passwordOnly);
    expect([refused.status, refused.body.detail]).toEqual([409, expect.stringContaining('requires two-factor')]);
    expect((await call('GET', '/v1/sessions/current', undefined, passwordOnly)).body.account_id).toBe(lax.accountId);
    expect((await call('POST', '/v1/sessions/switch', { account_id: strict.accountId }, second)).status).toBe(204);
  });

  it('opens only a half-open session, able to enrol, for a person without an authenticator joining an account that requires one', async () => {
    const owner = await ownerWithTwoFactor();
    const invited = await api(ctx.url, owner.key)('POST', '/v1/members', { email: uniqueEmail('new'), role: 'viewer' });
    expect(invited.status).toBe(201);
    const token = (invited.body.invitation_url as string).split('#')[1] as string;
    const joined = await acceptWith(token, { password: PASSWORD }, clientAddress());
    expect([joined.status, joined.body.two_factor_required, joined.body.enrolment_required]).toEqual([202, true, true]);
    const pending = sessionOf(joined).headers;
    expect((await call('GET', '/v1/forms', undefined, pending)).status).toBe(401);
    expect((await call('GET', '/v1/two-factor', undefined, pending)).body).toMatchObject({
      enabled: false,
      required: true,
    });
  });
});

/** A password sign-in of a person without a second factor (their last account). */
const acceptlessSignIn = (email: string, from: Headers) =>
  call('POST', '/v1/sessions/password', { email, password: PASSWORD }, from);

describe('guessing passwords through an invitation', () => {
  it('counts and audits each wrong password as a failed sign-in, and spends the invitation after a few', async () => {
    const person = await personWithPassword(ctx.platform.db, 'editor');
    const b = await invitedElsewhere(person.email);
    const lookup = await call('POST', '/v1/invitations/lookup', { token: b.token });
    expect(lookup.body).not.toHaveProperty('has_password');
    for (let i = 1; i < INVITATION_WRONG_TRIES; i += 1)
      expect((await acceptWith(b.token, { password: `wrong guess number ${i}` }, clientAddress())).status).toBe(401);
    const last = await acceptWith(b.token, { password: 'wrong guess, the last' }, clientAddress());
    expect([last.status, last.body.type]).toEqual([410, problemType('link-expired')]);
    // Spent: even the right password cannot use it now.
    expect((await acceptWith(b.token, { password: PASSWORD }, clientAddress())).status).toBe(410);
    const failed = await ctx.platform
      .db('audit_log')
      .where({ account_id: person.accountId, action: 'session.sign_in_failed' })
      .pluck('details');
    expect(failed).toEqual(
      Array.from({ length: INVITATION_WRONG_TRIES }, () => ({ method: 'invitation', reason: 'credentials' })),
    );
    const spent = await ctx.platform
      .db('audit_log')
      .where({ account_id: b.accountId, action: 'member.invitation_spent' });
    expect(spent).toHaveLength(1);
  });

  it('takes a try before checking the password: 20 concurrent guesses get 401 on all but the last try, then 410', async () => {
    const person = await personWithPassword(ctx.platform.db, 'editor');
    const b = await invitedElsewhere(person.email);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        acceptWith(b.token, { password: `wrong guess number ${i}` }, clientAddress()).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(INVITATION_WRONG_TRIES - 1);
    expect(statuses.filter((s) => s === 410)).toHaveLength(20 - (INVITATION_WRONG_TRIES - 1));
    const failed = await ctx.platform
      .db('audit_log')
      .where({ account_id: person.accountId, action: 'session.sign_in_failed' })
      .pluck('details');
    expect(failed).toHaveLength(INVITATION_WRONG_TRIES);
    expect((await acceptWith(b.token, { password: PASSWORD }, clientAddress())).status).toBe(410);
  });

  it('never gives a password to a person who signs in with SSO: the inviter holding the link cannot set one', async () => {
    const account = await factories.account(ctx.platform.db);
    const ssoOnly = await addTestMember(ctx.platform.db, account.id, 'owner', { email: uniqueEmail('sso-only') });
    const b = await invitedElsewhere(ssoOnly.email);
    const tried = await acceptWith(b.token, { password: 'the inviter’s choice of passphrase' }, clientAddress());
    expect([tried.status, tried.body.type]).toEqual([401, problemType('unauthorized')]);
    const person = await ctx.platform.db('users').where('email', ssoOnly.email).first('password_hash');
    expect(person.password_hash).toBeNull();
    const signIn = await call(
      'POST',
      '/v1/sessions/password',
      { email: ssoOnly.email, password: 'the inviter’s choice of passphrase' },
      clientAddress(),
    );
    expect(signIn.status).toBe(401);
  });

  it('applies the sign-in limits: an e-mail out of failures is answered 429 with Retry-After, right password or not', async () => {
    const person = await personWithPassword(ctx.platform.db, 'editor');
    for (let i = 0; i < SIGN_IN_LIMITS.perEmailAndClient.limit; i += 1)
      expect(
        (await call('POST', '/v1/sessions/password', { email: person.email, password: 'wrong wrong' }, person.from))
          .status,
      ).toBe(401);
    const b = await invitedElsewhere(person.email);
    const limited = await acceptWith(b.token, { password: PASSWORD }, person.from);
    expect([limited.status, limited.body.type]).toEqual([429, problemType('rate-limited')]);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await call('POST', '/v1/invitations/lookup', { token: b.token })).status).toBe(200);
  });
});

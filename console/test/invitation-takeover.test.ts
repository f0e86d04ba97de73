import { generate } from 'otplib';
import { eventually, factories, smtpSink, uniqueEmail, type SmtpSink } from '@intake/shared/testing';
import { callback, CLIENT, startProvider, throughProvider } from './oidc';
import { startStack } from './stack';

/**
 * Whose address: an inviter who accepts their own invitation for an address no one here has yet, chooses its
 * password and enrols an authenticator, must not keep them once the address's owner proves the mailbox, by single
 * sign-on (a real OpenID provider on loopback) or by a reset link (a real SMTP server on loopback).
 */
jest.setTimeout(120_000);

const ATTACKER_PASSWORD = 'Attacker-Chosen-Pass-1';

interface Ctx {
  provider: Awaited<ReturnType<typeof startProvider>>;
  stack: Awaited<ReturnType<typeof startStack>>;
  smtp: SmtpSink;
}

const c = {} as Ctx;
beforeAll(async () => {
  c.smtp = await smtpSink();
  c.provider = await startProvider();
  c.stack = await startStack({
    SMTP_URL: c.smtp.url,
    OIDC_ISSUER: c.provider.issuer,
    OIDC_CLIENT_ID: CLIENT.id,
    OIDC_CLIENT_SECRET: CLIENT.secret,
  });
  await c.provider.register(`${c.stack.url}/console/auth/callback`);
});
afterAll(async () => {
  await c.stack?.close();
  await c.provider?.close();
  await c.smtp?.close();
});

type Headers = Record<string, string>;
interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function call(method: string, path: string, body?: unknown, headers: Headers = {}): Promise<Answer> {
  const res = await fetch(`${c.stack.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const token = /intake_session=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  const parsed = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  const session: Headers = token
    ? { cookie: `intake_session=${token}`, 'x-csrf-token': `${parsed['csrf_token']}` }
    : {};
  return { status: res.status, body: parsed, headers: session };
}

const key = (account: { managementKey: string }) => ({ authorization: `Bearer ${account.managementKey}` });
const codeAt = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

/** An account invites `email`; the token of its link (which the inviter holds too). */
async function invite(account: { managementKey: string }, email: string, role = 'viewer'): Promise<string> {
  const invited = await call('POST', '/v1/members', { email, role }, key(account));
  expect(invited.status).toBe(201);
  return (invited.body['invitation_url'] as string).split('#')[1] as string;
}

/**
 * The squat: the owner of their own account invites an address no one here has yet, accepts the invitation with a
 * password of their choosing, and enrols an authenticator. Their account, session and authenticator's secret.
 */
async function squat(victim: string) {
  const attackers = await factories.account(c.stack.platform.db, { name: 'Attacker' });
  const accepted = await call('POST', '/v1/invitations/accept', {
    token: await invite(attackers, victim),
    password: ATTACKER_PASSWORD,
  });
  expect(accepted.status).toBe(201);
  const started = await call('POST', '/v1/two-factor/enrolment', undefined, accepted.headers);
  expect(started.status).toBe(201);
  const secret = started.body['secret'] as string;
  const confirmed = await call(
    'POST',
    '/v1/two-factor/enrolment/confirm',
    { code: await codeAt(secret) },
    accepted.headers,
  );
  expect(confirmed.status).toBeLessThan(300);
  return { account: attackers, session: accepted.headers, secret };
}

/** The victim's organisation, which requires two-factor sign-in. */
async function victimsOrganisation() {
  const { db } = c.stack.platform;
  const account = await factories.account(db, { name: 'Corp' });
  await db('accounts').where('id', account.id).update({ require_two_factor: true });
  return account;
}

/** The attacker's way back in: their password, then (when asked) a later code of their authenticator. */
async function attackerSignsIn(victim: string, accountId: string, secret: string): Promise<Answer> {
  const signed = await call('POST', '/v1/sessions/password', {
    email: victim,
    password: ATTACKER_PASSWORD,
    account_id: accountId,
  });
  if (signed.status !== 202) return signed;
  return call('POST', '/v1/sessions/two-factor', { code: await codeAt(secret, 1) }, signed.headers);
}

const personOf = (email: string) =>
  c.stack.platform
    .db('users')
    .where({ email })
    .first('password_hash', 'totp_secret', 'totp_enabled_at', 'recovery_codes', 'email_verified_at');

const removals = (accountId: string) =>
  c.stack.platform
    .db('audit_log')
    .where({ account_id: accountId, action: 'member.credentials_removed' })
    .pluck('details');

describe('an invitation accepted by its inviter, then the address’s owner signs in with SSO', () => {
  it('joining another account with SSO removes the password, authenticator, recovery codes and sessions set before', async () => {
    const victim = uniqueEmail('victim');
    const attacker = await squat(victim);
    const corp = await victimsOrganisation();
    const form = new URLSearchParams({ invitation: await invite(corp, victim, 'editor') });
    const { callback: url, sso } = await throughProvider(c.stack.url, victim, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const joined = await callback(url, sso);
    expect(joined.res.status).toBe(200);
    const theirs = { cookie: `intake_session=${joined.session}` };
    expect((await call('GET', '/v1/sessions/current', undefined, theirs)).body).toMatchObject({
      account_id: corp.id,
      email: victim,
      role: 'editor',
    });

    // The attacker's password is gone, and so is the session they opened by accepting.
    const back = await attackerSignsIn(victim, corp.id, attacker.secret);
    expect(back.status).toBe(401);
    expect((await call('GET', '/v1/forms', undefined, back.headers)).status).toBe(401);
    expect((await call('GET', '/v1/sessions/current', undefined, attacker.session)).status).toBe(401);
    expect(await personOf(victim)).toMatchObject({
      password_hash: null,
      totp_secret: null,
      totp_enabled_at: null,
      recovery_codes: [],
      email_verified_at: expect.any(Date),
    });
    const said = { via: 'sso', removed: ['password', 'authenticator', 'recovery codes'] };
    expect(await removals(corp.id)).toEqual([expect.objectContaining(said)]);
    expect(await removals(attacker.account.id)).toEqual([expect.objectContaining(said)]);
    // The owner's own session goes on.
    expect((await call('GET', '/v1/sessions/current', undefined, theirs)).status).toBe(200);
  });

  it('a plain SSO sign-in (no invitation) proves it the same way', async () => {
    const victim = uniqueEmail('victim');
    const attacker = await squat(victim);
    const { callback: url, sso } = await throughProvider(c.stack.url, victim);
    const signed = await callback(url, sso);
    expect(signed.session).toBeDefined();
    expect((await attackerSignsIn(victim, attacker.account.id, attacker.secret)).status).toBe(401);
    expect((await call('GET', '/v1/sessions/current', undefined, attacker.session)).status).toBe(401);
    expect(await removals(attacker.account.id)).toEqual([
      expect.objectContaining({ via: 'sso', removed: ['password', 'authenticator', 'recovery codes'] }),
    ]);
  });
});

describe('an invitation accepted by its inviter, then the address’s owner opens a reset link', () => {
  it('a reset link removes the authenticator set before and says so; once proven, the owner’s own is kept', async () => {
    const victim = uniqueEmail('victim');
    const attacker = await squat(victim);
    const reset = async (password: string) => {
      const before = c.smtp.mails.length;
      expect((await call('POST', '/v1/password-resets', { email: victim })).status).toBe(202);
      const mail = await eventually(() =>
        c.smtp.mails.slice(before).find((m) => m.to.includes(victim) && /reset#/.test(m.text)),
      );
      const token = /\/console\/reset#([A-Za-z0-9_-]+)/.exec(mail.text)?.[1] as string;
      expect((await call('POST', '/v1/password-resets/confirm', { token, password })).status).toBe(204);
    };
    await reset('the victim’s own new passphrase');
    // The password alone signs in now: the attacker's authenticator asks for no code.
    const mine = await call('POST', '/v1/sessions/password', {
      email: victim,
      password: 'the victim’s own new passphrase',
    });
    expect(mine.status).toBe(201);
    expect((await call('GET', '/v1/sessions/current', undefined, attacker.session)).status).toBe(401);
    const told = await eventually(() =>
      c.smtp.mails.find((m) => m.to.includes(victim) && /two-factor sign-in is off/.test(m.subject)),
    );
    expect(told.text).toMatch(/authenticator and the recovery codes set up on it before were removed/);
    expect(await removals(attacker.account.id)).toEqual([
      expect.objectContaining({ via: 'reset link', removed: ['authenticator', 'recovery codes'] }),
    ]);

    // Now proven: the owner's own authenticator survives a later reset and an SSO sign-in.
    const started = await call('POST', '/v1/two-factor/enrolment', undefined, mine.headers);
    const secret = started.body['secret'] as string;
    expect(
      (await call('POST', '/v1/two-factor/enrolment/confirm', { code: await codeAt(secret) }, mine.headers)).status,
    ).toBeLessThan(300);
    await reset('another passphrase of theirs');
    const { callback: url, sso } = await throughProvider(c.stack.url, victim);
    expect((await callback(url, sso)).session).toBeDefined();
    const again = await call('POST', '/v1/sessions/password', {
      email: victim,
      password: 'another passphrase of theirs',
    });
    expect([again.status, again.body['two_factor_required']]).toEqual([202, true]);
    expect(await removals(attacker.account.id)).toHaveLength(1);
  });
});

import { buildServiceApp } from '@intake/shared/runtime';
import {
  createTestPlatform,
  listen,
  managementKeyWithRole,
  smtpSink,
  uniqueEmail,
  useStarted,
  type ConfigOverrides,
} from '@intake/shared/testing';
import { managementService } from '../src';
import { api } from './helpers';
import { clientAddress, PASSWORD, personWithPassword, sessionOf } from './people-helpers';

/** A management server with ACCOUNT_CREATION set, and an SMTP stand-in its mail goes to. */
async function startWith(overrides: ConfigOverrides) {
  const smtp = await smtpSink();
  const platform = await createTestPlatform({
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    MAIL_FROM: 'Intake <no-reply@intake.test>',
    ...overrides,
  });
  const server = await listen(buildServiceApp(managementService, platform).callback());
  return {
    platform,
    url: server.url,
    smtp,
    async close() {
      await server.close();
      await platform.close();
      await smtp.close();
    },
  };
}

const owners = useStarted(() => startWith({}));
const anyone = useStarted(() => startWith({ ACCOUNT_CREATION: 'anyone', TRUST_PROXY: true }));
const operator = useStarted(() => startWith({ ACCOUNT_CREATION: 'operator' }));

/** Signs a person in with their password: their session's headers. */
async function signIn(url: string, email: string) {
  const res = await api(url)('POST', '/v1/sessions/password', { email, password: PASSWORD }, clientAddress());
  expect(res.status).toBe(201);
  return sessionOf(res).headers;
}

describe('an owner creates another account (ACCOUNT_CREATION=owners, the default)', () => {
  it('makes it on the free plan with the person its owner, who switches into it; admins and keys may not', async () => {
    const { db } = owners.platform;
    const owner = await personWithPassword(db, 'owner');
    const headers = await signIn(owners.url, owner.email);
    const call = api(owners.url);
    const made = await call('POST', '/v1/accounts', { name: 'Second client' }, headers);
    expect(made).toMatchObject({
      status: 201,
      body: { account_id: expect.stringMatching(/^acc_/), name: 'Second client' },
    });
    const mine = await call('GET', '/v1/sessions/accounts', undefined, headers);
    expect(mine.body.data).toEqual(
      expect.arrayContaining([expect.objectContaining({ account_id: made.body.account_id, role: 'owner' })]),
    );
    const switched = await call('POST', '/v1/sessions/switch', { account_id: made.body.account_id }, headers);
    expect(switched.status).toBe(204);
    const account = await db('accounts').where({ id: made.body.account_id }).first('plan_id', 'contact_email');
    expect(account).toEqual({ plan_id: 'free', contact_email: owner.email });
    expect(await db('projects').where({ account_id: made.body.account_id }).select('name', 'is_default')).toEqual([
      { name: 'Default', is_default: true },
    ]);

    const admin = await personWithPassword(db, 'admin');
    const refused = await call('POST', '/v1/accounts', { name: 'Mine' }, await signIn(owners.url, admin.email));
    expect(refused.status).toBe(403);
    const key = await managementKeyWithRole(db, owner.accountId, 'admin');
    expect((await api(owners.url, key)('POST', '/v1/accounts', { name: 'Key’s' })).status).toBe(403);
    expect((await call('POST', '/v1/sign-ups', { email: uniqueEmail('x'), account_name: 'X' })).status).toBe(404);
  });

  it('is refused when the operator alone makes accounts', async () => {
    const owner = await personWithPassword(operator.platform.db, 'owner');
    const headers = await signIn(operator.url, owner.email);
    const res = await api(operator.url)('POST', '/v1/accounts', { name: 'Nope' }, headers);
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/operator creates accounts/);
    expect((await api(operator.url)('GET', '/v1/sign-in-options')).body.account_creation).toBe('operator');
  });
});

describe('anyone signs up (ACCOUNT_CREATION=anyone)', () => {
  const linkIn = (email: string) => {
    const mail = anyone.smtp.mails.filter((m) => m.to.includes(email)).at(-1);
    return /\/console\/sign-up#([\w-]+)/.exec(mail?.text ?? '')?.[1];
  };

  it('makes nothing until the mailed link is opened with a good password; then the account, its owner, a session', async () => {
    const { db } = anyone.platform;
    const call = api(anyone.url);
    expect((await call('GET', '/v1/sign-in-options')).body.account_creation).toBe('anyone');
    const email = uniqueEmail('new');
    const asked = await call('POST', '/v1/sign-ups', { email, account_name: 'Ada’s studio' }, clientAddress());
    expect(asked.status).toBe(202);
    expect(await db('users').where({ email }).first()).toBeUndefined();
    const token = linkIn(email);
    expect(token).toBeDefined();
    // The visitor's words stay out of the subject (a mail from the operator's domain); the body quotes them.
    const mail = anyone.smtp.mails.find((m) => m.to.includes(email));
    expect(mail?.subject).toBe('Confirm your Intake account');
    expect(mail?.text).toContain('an Intake account named "Ada’s studio"');

    const weak = await call('POST', '/v1/sign-ups/confirm', { token, password: 'short' }, clientAddress());
    expect(weak.status).toBe(422);
    const done = await call('POST', '/v1/sign-ups/confirm', { token, password: PASSWORD }, clientAddress());
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({ email, role: 'owner', project_ids: null });
    const again = await call('POST', '/v1/sign-ups/confirm', { token, password: PASSWORD }, clientAddress());
    expect(again.status).toBe(410);
    const headers = sessionOf(done).headers;
    expect((await call('GET', '/v1/account', undefined, headers)).body).toMatchObject({ name: 'Ada’s studio' });
    const audit = await call('GET', '/v1/audit-log', undefined, headers);
    expect(audit.body.data.map((e: { action: string }) => e.action)).toEqual(['session.signed_in', 'account.created']);
  });

  it('asks a person who already signs in here for their password, and limits the links sent', async () => {
    const { db } = anyone.platform;
    const call = api(anyone.url);
    const known = await personWithPassword(db, 'viewer');
    await call('POST', '/v1/sign-ups', { email: known.email, account_name: 'Side project' }, clientAddress());
    const token = linkIn(known.email);
    const wrong = await call(
      'POST',
      '/v1/sign-ups/confirm',
      { token, password: 'not the password at all' },
      clientAddress(),
    );
    expect(wrong.status).toBe(401);
    // Audited in the person's account as a failed sign-in, as a wrong password anywhere else is.
    const failures = await db('audit_log').where({ account_id: known.accountId, action: 'session.sign_in_failed' });
    expect(failures.map((e) => e.details)).toEqual([{ method: 'sign-up', reason: 'credentials' }]);
    const right = await call('POST', '/v1/sign-ups/confirm', { token, password: PASSWORD }, clientAddress());
    expect(right.status).toBe(201);
    const memberships = await call('GET', '/v1/sessions/accounts', undefined, sessionOf(right).headers);
    expect(memberships.body.data).toHaveLength(2);

    const email = uniqueEmail('flood');
    const from = clientAddress();
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await call('POST', '/v1/sign-ups', { email, account_name: `Flood ${i}` }, from)).status);
    expect(statuses).toEqual([202, 202, 202, 429]);
  });

  it('counts an IPv6 client by its /64: ten links from one, then 429 whatever address of it asks', async () => {
    const call = api(anyone.url);
    const net = clientAddress()['x-forwarded-for'].replace(/::1$/, '');
    const statuses = [];
    for (let i = 1; i <= 11; i++) {
      const from = { 'x-forwarded-for': `${net}:${i.toString(16)}:0:0:${i.toString(16)}` };
      statuses.push(
        (await call('POST', '/v1/sign-ups', { email: uniqueEmail('v6'), account_name: 'Mine' }, from)).status,
      );
    }
    expect(statuses).toEqual([...Array<number>(10).fill(202), 429]);
  });
});

describe('sign-up links under concurrency', () => {
  it('counts concurrent requests one after another: 20 at once for one address send exactly 3 links', async () => {
    const call = api(anyone.url);
    const email = uniqueEmail('rush');
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call('POST', '/v1/sign-ups', { email, account_name: `Rush ${i}` }, clientAddress()).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 202)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(17);
    expect(await anyone.platform.db('sign_ups').where({ email }).pluck('account_name')).toHaveLength(3);
  });
});

import type { Role } from '@intake/shared/auth';
import {
  addTestMember,
  emptyTestDatabaseUrl,
  eventually,
  factories,
  uniqueEmail,
  useStarted,
} from '@intake/shared/testing';
import { api, startManagement, startManagementWithSmtp } from './helpers';
import { accept, clientAddress, PASSWORD, personWithPassword, sessionOf } from './people-helpers';
import { SIGN_IN_LIMITS } from '../src/people/sign-in';

const ctx = useStarted(() => startManagementWithSmtp({ TRUST_PROXY: true }));

const signIn = (email: string, password: string, headers: Record<string, string> = {}) =>
  api(ctx.url)('POST', '/v1/sessions/password', { email, password }, headers);

const person = (role?: Role) => personWithPassword(ctx.platform.db, role);

describe('password sign-in', () => {
  it('signs a member in with e-mail and password to an HttpOnly session that shows who is signed in', async () => {
    const p = await person();
    const res = await signIn(p.email.toUpperCase(), PASSWORD);
    expect(res.status).toBe(201);
    expect(res.headers.get('set-cookie')).toMatch(/HttpOnly.*SameSite=Strict/);
    expect(res.body).toMatchObject({ account_id: p.accountId, member_id: p.memberId, email: p.email, role: 'editor' });
    const { headers } = sessionOf(res);
    const sessions = await api(ctx.url)('GET', '/v1/sessions', undefined, headers);
    expect(sessions.body.data).toEqual([expect.objectContaining({ current: true })]);
    const member = await ctx.platform.db('members').where({ id: p.memberId }).first('last_sign_in_at');
    expect(member.last_sign_in_at).not.toBeNull();
  });

  it('answers an unknown e-mail exactly as a wrong password, in about the same time', async () => {
    const p = await person();
    const time = async (email: string) => {
      const started = performance.now();
      const res = await signIn(email, 'not the password at all', clientAddress());
      return { ms: performance.now() - started, status: res.status, body: res.body };
    };
    // Both paths warm (the unknown one makes its dummy hash once), then taken in turns, so that a machine busy
    // with other work slows both alike; the limits allow 5 failures per e-mail, so each known try is a fresh person.
    await time(p.email);
    await time(uniqueEmail('nobody'));
    const wrong: Awaited<ReturnType<typeof time>>[] = [];
    const unknown: Awaited<ReturnType<typeof time>>[] = [];
    for (let i = 0; i < 5; i++) {
      wrong.push(await time(i < 3 ? p.email : (await person()).email));
      unknown.push(await time(uniqueEmail('nobody')));
    }
    expect(unknown[0]?.body).toEqual(wrong[0]?.body);
    expect(new Set([...wrong, ...unknown].map((w) => w.status))).toEqual(new Set([401]));
    const median = (xs: { ms: number }[]) => xs.map((x) => x.ms).sort((x, y) => x - y)[2] as number;
    // Both spend an argon2 verification: neither answer is a shortcut of the other.
    expect(median(unknown) / median(wrong)).toBeGreaterThan(0.4);
    expect(median(unknown) / median(wrong)).toBeLessThan(2.5);
  });
});

describe('password sign-in: limits and switches', () => {
  it('limits the guesser, not the person: failures of an e-mail from one client lock that client out, not the right password from elsewhere', async () => {
    const p = await person();
    const guesser = clientAddress();
    for (let i = 0; i < SIGN_IN_LIMITS.perEmailAndClient.limit; i += 1)
      expect((await signIn(p.email, 'wrong wrong wrong', guesser)).status).toBe(401);
    const limited = await signIn(p.email, PASSWORD, guesser);
    expect([limited.status, limited.body.type]).toEqual([429, `${ctx.platform.config.PROBLEMS_URL}/rate-limited`]);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await signIn(p.email, PASSWORD, p.from)).status).toBe(201);
    const failures = () =>
      ctx.platform.db('audit_log').where({ account_id: p.accountId, action: 'session.sign_in_failed' }).count('* as n');
    await eventually(async () => Number((await failures())[0]?.n) === SIGN_IN_LIMITS.perEmailAndClient.limit);
  });
});

describe('password sign-in: who the limits count', () => {
  it('counts an IPv6 client by its /64: other addresses of the same /64 are the same guesser', async () => {
    const prefix = (clientAddress()['x-forwarded-for'] as string).replace(/::1$/, '');
    const from = (i: number) => ({ 'x-forwarded-for': `${prefix}:${i.toString(16)}::${i + 2}` });
    for (let i = 0; i < SIGN_IN_LIMITS.perClient.limit; i += 1)
      expect((await signIn(uniqueEmail('spray'), 'wrong wrong wrong', from(i))).status).toBe(401);
    expect((await signIn(uniqueEmail('spray'), 'wrong wrong wrong', from(999))).status).toBe(429);
    expect((await signIn(uniqueEmail('spray'), 'wrong wrong wrong', clientAddress())).status).toBe(401);
  });

  it('takes the client from the right of X-Forwarded-For (TRUSTED_PROXY_HOPS), never from what the client wrote', async () => {
    const p = await person();
    const real = clientAddress()['x-forwarded-for'];
    for (let i = 0; i < SIGN_IN_LIMITS.perEmailAndClient.limit; i += 1) {
      const forged = { 'x-forwarded-for': `${clientAddress()['x-forwarded-for']}, ${real}` };
      expect((await signIn(p.email, 'wrong wrong wrong', forged)).status).toBe(401);
    }
    const forged = { 'x-forwarded-for': `${clientAddress()['x-forwarded-for']}, ${real}` };
    expect((await signIn(p.email, PASSWORD, forged)).status).toBe(429);

    const twoHops = await startManagement({ TRUST_PROXY: true, TRUSTED_PROXY_HOPS: 2 });
    try {
      const account = await factories.account(twoHops.platform.db);
      const [client, balancer] = [clientAddress(), clientAddress()].map((h) => h['x-forwarded-for']);
      const headers = { 'x-forwarded-for': `${clientAddress()['x-forwarded-for']}, ${client}, ${balancer}` };
      const opened = await api(twoHops.url)('POST', '/v1/sessions', { key: account.managementKey }, headers);
      expect(opened.status).toBe(201);
      const entry = await twoHops.platform
        .db('audit_log')
        .where({ account_id: account.id, action: 'session.signed_in' })
        .first('ip');
      expect(entry.ip).toBe(client);
    } finally {
      await twoHops.close();
    }
  });

  it('stops a guesser spread over many clients at a slower ceiling per e-mail', async () => {
    const p = await person();
    const { limit } = SIGN_IN_LIMITS.perEmail;
    for (let i = 0; i < limit; i += 1)
      expect((await signIn(p.email, 'wrong wrong wrong', clientAddress())).status).toBe(401);
    const limited = await signIn(p.email, PASSWORD, clientAddress());
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(15 * 60);
  });

  it('limits failures per client address across e-mails', async () => {
    const trusting = await startManagement({ TRUST_PROXY: true });
    try {
      const headers = clientAddress();
      const call = api(trusting.url);
      for (let i = 0; i < SIGN_IN_LIMITS.perClient.limit; i += 1)
        expect(
          (await call('POST', '/v1/sessions/password', { email: uniqueEmail('spray'), password: 'x' }, headers)).status,
        ).toBe(401);
      const limited = await call(
        'POST',
        '/v1/sessions/password',
        { email: uniqueEmail('spray'), password: 'x' },
        headers,
      );
      expect(limited.status).toBe(429);
      const elsewhere = await call(
        'POST',
        '/v1/sessions/password',
        { email: uniqueEmail('spray'), password: 'x' },
        clientAddress(),
      );
      expect(elsewhere.status).toBe(401);
    } finally {
      await trusting.close();
    }
  });
});

describe('password sign-in: concurrent guesses', () => {
  it('takes the slot before the password is checked: 20 concurrent wrong guesses get exactly the limit of 401s, the rest 429', async () => {
    const p = await person();
    const guesser = clientAddress();
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => signIn(p.email, `wrong guess ${i}`, guesser).then((r) => r.status)),
    );
    const { limit } = SIGN_IN_LIMITS.perEmailAndClient;
    expect(statuses.filter((s) => s === 401)).toHaveLength(limit);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20 - limit);
    // The right password from elsewhere still works.
    expect((await signIn(p.email, PASSWORD, p.from)).status).toBe(201);
  });

  it('gives the slot back when the password is right: it is no failure', async () => {
    const p = await person();
    const guesser = clientAddress();
    const { limit } = SIGN_IN_LIMITS.perEmailAndClient;
    for (let i = 1; i < limit; i += 1) expect((await signIn(p.email, 'wrong wrong wrong', guesser)).status).toBe(401);
    expect((await signIn(p.email, PASSWORD, guesser)).status).toBe(201);
    expect((await signIn(p.email, 'wrong wrong wrong', guesser)).status).toBe(401);
    expect((await signIn(p.email, PASSWORD, guesser)).status).toBe(429);
  });

  it('counts concurrent guesses from many clients against the per-e-mail ceiling exactly', async () => {
    const p = await person();
    const { limit } = SIGN_IN_LIMITS.perEmail;
    const statuses = await Promise.all(
      Array.from({ length: limit + 10 }, () =>
        signIn(p.email, 'wrong wrong wrong', clientAddress()).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(limit);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
  });
});

describe('password sign-in: switched off', () => {
  it('OIDC_ONLY=true turns passwords off', async () => {
    const only = await startManagement({ OIDC_ONLY: true });
    try {
      const p = await person();
      const res = await api(only.url)('POST', '/v1/sessions/password', { email: p.email, password: PASSWORD });
      expect([res.status, res.body.type]).toEqual([403, `${only.platform.config.PROBLEMS_URL}/forbidden`]);
      expect((await api(only.url)('GET', '/v1/sign-in-options')).body).toEqual({
        password: false,
        sso: false,
        key: true,
        account_creation: 'owners',
        members: true,
      });
    } finally {
      await only.close();
    }
  });
});

describe('sign-in options before anyone has joined', () => {
  it('offers only the management key on an empty install, and passwords once a member has joined', async () => {
    const empty = await startManagement({ DATABASE_URL: await emptyTestDatabaseUrl('nobody_joined') });
    try {
      const options = async () => (await api(empty.url)('GET', '/v1/sign-in-options')).body;
      const creation = { account_creation: 'owners' };
      expect(await options()).toEqual({ password: false, sso: false, key: true, ...creation, members: false });
      const { db } = empty.platform;
      const account = await factories.account(db);
      await addTestMember(db, account.id, 'owner', { status: 'invited' });
      expect((await options()).members).toBe(false);
      await personWithPassword(db, 'viewer');
      expect(await options()).toEqual({ password: true, sso: false, key: true, ...creation, members: true });
    } finally {
      await empty.close();
    }
  });
});

describe('password reset', () => {
  it('mails a single-use link; the new password works, the old one and every old session do not', async () => {
    const p = await person();
    const old = sessionOf(await signIn(p.email, PASSWORD));
    const asked = await api(ctx.url)('POST', '/v1/password-resets', { email: p.email });
    expect(asked.status).toBe(202);
    expect((await api(ctx.url)('POST', '/v1/password-resets', { email: uniqueEmail('nobody') })).status).toBe(202);
    const mail = await eventually(() => ctx.smtp.mails.find((m) => m.to.includes(p.email)));
    const token = /\/console\/reset#([A-Za-z0-9_-]+)/.exec(mail.text)?.[1] as string;
    expect(token).toBeDefined();
    const weak = await api(ctx.url)('POST', '/v1/password-resets/confirm', { token, password: 'password1234' });
    expect(weak.status).toBe(422);
    const next = 'a brand new passphrase';
    expect((await api(ctx.url)('POST', '/v1/password-resets/confirm', { token, password: next })).status).toBe(204);
    expect((await api(ctx.url)('POST', '/v1/password-resets/confirm', { token, password: next })).status).toBe(410);
    expect((await api(ctx.url)('GET', '/v1/forms', undefined, old.headers)).status).toBe(401);
    expect((await signIn(p.email, PASSWORD, clientAddress())).status).toBe(401);
    expect((await signIn(p.email, next, clientAddress())).status).toBe(201);
  });
});

describe('secrets at rest', () => {
  it('stores no password, invitation or reset token in the clear; passwords as argon2id', async () => {
    const p = await person('admin');
    const invited = await api(ctx.url, p.key)('POST', '/v1/members', { email: uniqueEmail('fresh'), role: 'viewer' });
    const token = invited.body.invitation_url.split('#')[1];
    const password = 'an unguessable sentence 42';
    expect((await accept(ctx.url, invited.body.invitation_url, password)).res.status).toBe(201);
    await api(ctx.url)('POST', '/v1/password-resets', { email: p.email });
    const reset = await eventually(() => ctx.smtp.mails.find((m) => m.to.includes(p.email) && /reset#/.test(m.text)));
    const resetToken = /reset#([A-Za-z0-9_-]+)/.exec(reset.text)?.[1] as string;
    const dump = JSON.stringify(
      await Promise.all(
        ['users', 'members', 'member_invitations', 'password_resets', 'audit_log', 'console_sessions'].map((t) =>
          ctx.platform.db(t).select('*'),
        ),
      ),
    );
    for (const secret of [PASSWORD, password, token, resetToken]) expect(dump).not.toContain(secret);
    const user = await ctx.platform.db('users').where({ email: invited.body.email }).first('password_hash');
    expect(user.password_hash).toMatch(/^\$argon2id\$/);
  });
});

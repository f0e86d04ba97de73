import { factories, useStarted } from '@intake/shared/testing';
import { sha256Hex } from '@intake/shared/base';
import { SESSION_IDLE_MS, sweepSessions } from '@intake/shared/auth';
import { api, startManagement } from './helpers';

const ctx = useStarted(() => startManagement());

/** Moves the clock of the session of `token` back (its last use, its expiry) instead of waiting. */
const ageSession = (token: string, times: { last_seen_at?: Date; expires_at?: Date }) =>
  ctx.platform
    .db('console_sessions')
    .where({ token_hash: sha256Hex(token) })
    .update(times);

async function signIn(key: string) {
  const res = await api(ctx.url)('POST', '/v1/sessions', { key });
  const setCookie = res.headers.get('set-cookie') ?? '';
  const token = /intake_session=([^;]*)/.exec(setCookie)?.[1] ?? '';
  return { res, setCookie, token, cookie: `intake_session=${token}`, csrf: res.body?.csrf_token as string };
}

describe('console sessions, what works', () => {
  it('exchanges a management key for an HttpOnly SameSite=Strict cookie that authenticates the API', async () => {
    const account = await factories.account(ctx.platform.db);
    const { res, setCookie, cookie, csrf, token } = await signIn(account.managementKey);
    expect(res.status).toBe(201);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).not.toMatch(/Secure/); // plain http here; see the https test below
    expect(setCookie).not.toContain(account.managementKey);
    expect(res.body).toMatchObject({ account_id: account.id, csrf_token: expect.any(String) });
    // only the token's hash is stored
    expect(await ctx.platform.db('console_sessions').where({ token_hash: token }).first()).toBeUndefined();
    expect(
      await ctx.platform
        .db('console_sessions')
        .where({ token_hash: sha256Hex(token) })
        .first(),
    ).toBeDefined();

    const call = api(ctx.url);
    const forms = await call('GET', '/v1/forms', undefined, { cookie });
    expect(forms.status).toBe(200);
    const current = await call('GET', '/v1/sessions/current', undefined, { cookie });
    expect(current.body).toMatchObject({ account_id: account.id, csrf_token: csrf });
    const created = await call('POST', '/v1/forms', { name: 'Via session' }, { cookie, 'x-csrf-token': csrf });
    expect(created.status).toBe(201);
  });

  it('sign-out ends the session on the server and clears the cookie', async () => {
    const account = await factories.account(ctx.platform.db);
    const { cookie, csrf } = await signIn(account.managementKey);
    const call = api(ctx.url);
    const out = await call('DELETE', '/v1/sessions/current', undefined, { cookie, 'x-csrf-token': csrf });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/intake_session=;.*Max-Age=0/);
    expect((await call('GET', '/v1/forms', undefined, { cookie })).status).toBe(401);
  });

  it('marks the cookie Secure when the public URL is https', async () => {
    const secure = await startManagement({ PUBLIC_BASE_URL: 'https://intake.example.com' });
    try {
      const account = await factories.account(secure.platform.db);
      const res = await fetch(`${secure.url}/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key: account.managementKey }),
      });
      expect(res.headers.get('set-cookie')).toMatch(/; Secure/);
    } finally {
      await secure.close();
    }
  });
});

describe('console sessions, what errors', () => {
  it('a wrong, revoked or submission key gets a readable problem and no cookie', async () => {
    const account = await factories.account(ctx.platform.db);
    const revoked = await factories.apiKey(ctx.platform.db, account.id, 'management', { revoked: true });
    const submission = await factories.apiKey(ctx.platform.db, account.id, 'submission');
    for (const [key, status] of [
      ['svc_mgmt_nope', 403],
      ['hello', 403],
      [revoked, 403],
      [submission, 403],
    ] as const) {
      const { res, setCookie } = await signIn(key);
      expect([key, res.status]).toEqual([key, status]);
      expect(res.body.detail).toEqual(expect.any(String));
      expect(setCookie).toBe('');
    }
    expect((await api(ctx.url)('POST', '/v1/sessions', {})).status).toBe(422);
  });

  it('GET /v1/sessions/current with a key (no session) is 404', async () => {
    const account = await factories.account(ctx.platform.db);
    expect((await api(ctx.url, account.managementKey)('GET', '/v1/sessions/current')).status).toBe(404);
  });
});

describe('console sessions, what must be refused', () => {
  it('a state-changing request with the cookie but without the CSRF token is 403 csrf-failed', async () => {
    const account = await factories.account(ctx.platform.db);
    const { cookie, csrf } = await signIn(account.managementKey);
    const call = api(ctx.url);
    for (const headers of [
      { cookie },
      { cookie, 'x-csrf-token': 'wrong' },
      { cookie, 'x-csrf-token': `${csrf}x` },
    ] as Record<string, string>[]) {
      const res = await call('POST', '/v1/forms', { name: 'Forged' }, headers);
      expect([res.status, res.body.type]).toEqual([403, `${ctx.platform.config.PROBLEMS_URL}/csrf-failed`]);
    }
    expect((await call('DELETE', '/v1/sessions/current', undefined, { cookie })).status).toBe(403);
    expect(await ctx.platform.db('forms').where({ account_id: account.id, name: 'Forged' })).toHaveLength(0);
  });

  it('revoking the key ends its sessions', async () => {
    const account = await factories.account(ctx.platform.db);
    const second = await api(ctx.url, account.managementKey)('POST', '/v1/api-keys', { type: 'management' });
    const { cookie } = await signIn(second.body.key);
    expect((await api(ctx.url)('GET', '/v1/forms', undefined, { cookie })).status).toBe(200);
    expect((await api(ctx.url, account.managementKey)('DELETE', `/v1/api-keys/${second.body.id}`)).status).toBe(204);
    const after = await api(ctx.url)('GET', '/v1/forms', undefined, { cookie });
    expect([after.status, after.body.detail]).toEqual([401, expect.stringMatching(/sign in again/)]);
  });

  it('an idle session and one past its absolute expiry are ended', async () => {
    const account = await factories.account(ctx.platform.db);
    const idle = await signIn(account.managementKey);
    await ageSession(idle.token, { last_seen_at: new Date(Date.now() - SESSION_IDLE_MS - 1000) });
    expect((await api(ctx.url)('GET', '/v1/forms', undefined, { cookie: idle.cookie })).status).toBe(401);
    expect(await ctx.platform.db('console_sessions').where({ token_hash: sha256Hex(idle.token) })).toHaveLength(0);

    const old = await signIn(account.managementKey);
    await ageSession(old.token, { expires_at: new Date(Date.now() - 1000) });
    expect((await api(ctx.url)('GET', '/v1/forms', undefined, { cookie: old.cookie })).status).toBe(401);
  });

  it('the sweeper removes ended sessions and keeps live ones', async () => {
    const account = await factories.account(ctx.platform.db);
    const live = await signIn(account.managementKey);
    const idle = await signIn(account.managementKey);
    await ageSession(idle.token, { last_seen_at: new Date(Date.now() - SESSION_IDLE_MS - 1000) });
    expect(await sweepSessions(ctx.platform.db, new Date())).toBeGreaterThanOrEqual(1);
    const left = await ctx.platform.db('console_sessions').where({ account_id: account.id }).pluck('token_hash');
    expect(left).toEqual([sha256Hex(live.token)]);
  });

  it('a session sees only its own account, and a made-up cookie is 401', async () => {
    const a = await factories.account(ctx.platform.db);
    const b = await factories.account(ctx.platform.db);
    const form = await factories.form(ctx.platform.db, b.id);
    const { cookie } = await signIn(a.managementKey);
    expect((await api(ctx.url)('GET', `/v1/forms/${form.id}`, undefined, { cookie })).status).toBe(404);
    const forged = await api(ctx.url)('GET', '/v1/forms', undefined, { cookie: 'intake_session=abc' });
    expect(forged.status).toBe(401);
  });
});

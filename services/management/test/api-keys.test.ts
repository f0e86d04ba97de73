import { factories, useStarted } from '@intake/shared/testing';
import { api, startManagement } from './helpers';

const ctx = useStarted(() => startManagement({ KEY_MINT_LIMIT: 5, KEY_MINT_WINDOW_SECONDS: 3600 }));

describe('API keys, what works', () => {
  it('mints a key of each type, shows it once, lists without it, and revokes', async () => {
    const account = await factories.account(ctx.platform.db);
    const call = api(ctx.url, account.managementKey);
    const created = await call('POST', '/v1/api-keys', { type: 'submission', name: 'website' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^key_/),
      type: 'submission',
      name: 'website',
      revoked_at: null,
    });
    expect(created.body.key).toMatch(/^svc_sub_[A-Za-z0-9_-]{43}$/);
    expect(created.body.key.startsWith(created.body.prefix)).toBe(true);

    const mgmt = await call('POST', '/v1/api-keys', { type: 'management' });
    expect(mgmt.body.key).toMatch(/^svc_mgmt_[A-Za-z0-9_-]{43}$/);

    const list = await call('GET', '/v1/api-keys');
    expect(list.status).toBe(200);
    expect(list.body.data.map((k: { id: string }) => k.id)).toEqual(
      expect.arrayContaining([created.body.id, mgmt.body.id]),
    );
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
    expect(list.body.data.every((k: Record<string, unknown>) => !('key' in k))).toBe(true);

    const revoked = await call('DELETE', `/v1/api-keys/${created.body.id}`);
    expect(revoked.status).toBe(204);
    const after = await call('GET', '/v1/api-keys');
    expect(after.body.data.find((k: { id: string }) => k.id === created.body.id).revoked_at).toEqual(
      expect.any(String),
    );
  });

  it('rotates the two types independently: revoking a management key leaves submission keys working', async () => {
    const account = await factories.account(ctx.platform.db);
    const call = api(ctx.url, account.managementKey);
    const second = await call('POST', '/v1/api-keys', { type: 'management' });
    const sub = await call('POST', '/v1/api-keys', { type: 'submission' });
    const firstId = (await call('GET', '/v1/api-keys')).body.data.find((k: { prefix: string }) =>
      account.managementKey.startsWith(k.prefix),
    ).id;
    expect((await api(ctx.url, second.body.key)('DELETE', `/v1/api-keys/${firstId}`)).status).toBe(204);
    expect((await call('GET', '/v1/api-keys')).status).toBe(403);
    const keys = (await api(ctx.url, second.body.key)('GET', '/v1/api-keys')).body.data;
    expect(keys.find((k: { id: string }) => k.id === sub.body.id).revoked_at).toBeNull();
  });

  it('records when a key was last used', async () => {
    const account = await factories.account(ctx.platform.db);
    const call = api(ctx.url, account.managementKey);
    const before = (await call('GET', '/v1/api-keys')).body.data[0];
    expect(before.last_used_at).toEqual(expect.any(String));
    const sub = await call('POST', '/v1/api-keys', { type: 'submission' });
    expect(sub.body.last_used_at).toBeNull();
  });

  it('never stores a full key in any table', async () => {
    const account = await factories.account(ctx.platform.db);
    const call = api(ctx.url, account.managementKey);
    const keys = [
      account.managementKey,
      (await call('POST', '/v1/api-keys', { type: 'submission' })).body.key,
      (await call('POST', '/v1/api-keys', { type: 'management' })).body.key,
    ];
    const tables: { table_name: string }[] = (
      await ctx.platform.db.raw(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
      )
    ).rows;
    expect(tables.length).toBeGreaterThan(10);
    for (const { table_name } of tables) {
      const { rows } = await ctx.platform.db.raw(
        `SELECT count(*)::int AS n FROM ?? t WHERE ${keys.map(() => 't::text LIKE ?').join(' OR ')}`,
        [table_name, ...keys.map((k) => `%${k.slice(-20)}%`)],
      );
      expect({ table: table_name, hits: rows[0].n }).toEqual({ table: table_name, hits: 0 });
    }
  });
});

describe('API keys, what errors', () => {
  it('answers 422 with an errors list for a body that does not fit', async () => {
    const account = await factories.account(ctx.platform.db);
    const res = await api(ctx.url, account.managementKey)('POST', '/v1/api-keys', { type: 'admin', extra: 1 });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.body.type).toBe(`${ctx.platform.config.PROBLEMS_URL}/validation-failed`);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(
      expect.arrayContaining(['body/type', 'body/extra']),
    );
  });

  it('answers 400 bad-body for JSON that does not parse and 415 for another content type', async () => {
    const account = await factories.account(ctx.platform.db);
    const call = api(ctx.url, account.managementKey);
    const broken = await call('POST', '/v1/api-keys', '{"type": "submission"');
    expect(broken.status).toBe(400);
    expect(broken.body.type).toMatch(/\/bad-body$/);
    const form = await call('POST', '/v1/api-keys', 'type=submission', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
  });

  it('caps minting per account with 429 and Retry-After', async () => {
    const account = await factories.account(ctx.platform.db);
    const call = api(ctx.url, account.managementKey);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => call('POST', '/v1/api-keys', { type: 'submission' })),
    );
    // the account's first management key was minted in this window too: 4 more fit under the cap of 5
    expect(results.filter((r) => r.status === 201)).toHaveLength(4);
    const limited = results.filter((r) => r.status === 429);
    expect(limited).toHaveLength(4);
    expect(limited[0]?.body.type).toMatch(/\/rate-limited$/);
    expect(Number(limited[0]?.headers.get('retry-after'))).toBeGreaterThan(0);
    // another account is not affected
    const other = await factories.account(ctx.platform.db);
    expect((await api(ctx.url, other.managementKey)('POST', '/v1/api-keys', { type: 'submission' })).status).toBe(201);
  });

  it('refuses to revoke the last active management key', async () => {
    const account = await factories.account(ctx.platform.db);
    const call = api(ctx.url, account.managementKey);
    const id = (await call('GET', '/v1/api-keys')).body.data[0].id;
    const res = await call('DELETE', `/v1/api-keys/${id}`);
    expect(res.status).toBe(409);
    expect((await call('GET', '/v1/api-keys')).status).toBe(200);
  });
});

describe('API keys, what must be refused', () => {
  it('401 without a key', async () => {
    const res = await api(ctx.url)('GET', '/v1/api-keys');
    expect(res.status).toBe(401);
    expect(res.body.type).toMatch(/\/unauthorized$/);
  });

  it.each([
    ['an unknown key', 'svc_mgmt_' + 'x'.repeat(43)],
    ['a malformed key', 'hello'],
    ['a non-bearer scheme', null],
  ])('403 invalid-key for %s', async (_label, key) => {
    const headers: Record<string, string> = key === null ? { authorization: 'Basic dXNlcjpwYXNz' } : {};
    const res = await api(ctx.url, key ?? undefined)('GET', '/v1/api-keys', undefined, headers);
    expect(res.status).toBe(403);
    expect(res.body.type).toMatch(/\/invalid-key$/);
  });

  it('403 invalid-key at once for a revoked key', async () => {
    const account = await factories.account(ctx.platform.db);
    const other = await api(ctx.url, account.managementKey)('POST', '/v1/api-keys', { type: 'management' });
    expect((await api(ctx.url, other.body.key)('GET', '/v1/api-keys')).status).toBe(200);
    expect((await api(ctx.url, account.managementKey)('DELETE', `/v1/api-keys/${other.body.id}`)).status).toBe(204);
    const res = await api(ctx.url, other.body.key)('GET', '/v1/api-keys');
    expect(res.status).toBe(403);
    expect(res.body.type).toMatch(/\/invalid-key$/);
  });

  it('403 for a submission key on a management route', async () => {
    const account = await factories.account(ctx.platform.db);
    const sub = await factories.apiKey(ctx.platform.db, account.id, 'submission');
    const res = await api(ctx.url, sub)('POST', '/v1/api-keys', { type: 'management' });
    expect(res.status).toBe(403);
    expect(res.body.type).toMatch(/\/insufficient-scope$/);
  });

  it('404 for another account’s key, which stays active', async () => {
    const owner = await factories.account(ctx.platform.db);
    const intruder = await factories.account(ctx.platform.db);
    const target = await api(ctx.url, owner.managementKey)('POST', '/v1/api-keys', { type: 'submission' });
    const res = await api(ctx.url, intruder.managementKey)('DELETE', `/v1/api-keys/${target.body.id}`);
    expect(res.status).toBe(404);
    const list = await api(ctx.url, intruder.managementKey)('GET', '/v1/api-keys');
    expect(list.body.data.map((k: { id: string }) => k.id)).not.toContain(target.body.id);
    const ownerList = await api(ctx.url, owner.managementKey)('GET', '/v1/api-keys');
    expect(ownerList.body.data.find((k: { id: string }) => k.id === target.body.id).revoked_at).toBeNull();
  });
});

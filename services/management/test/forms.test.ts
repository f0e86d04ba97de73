import { subscribeFormChanges, type FormChange } from '@intake/shared/messaging';
import { eventually, factories, useStarted } from '@intake/shared/testing';
import { api, startManagement } from './helpers';

const ctx = useStarted(() => startManagement());

const owner = async () => {
  const account = await factories.account(ctx.platform.db);
  return { account, call: api(ctx.url, account.managementKey) };
};

describe('forms, what works: creating', () => {
  it('creates a form with defaults and a generated URL-safe slug, and shows its ingest URL', async () => {
    const { call } = await owner();
    const run = Date.now().toString(36);
    const res = await call('POST', '/v1/forms', { name: `Contact — Über uns! ${run}` });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^frm_/),
      name: `Contact — Über uns! ${run}`,
      status: 'live',
      honeypot_field: '_gotcha',
      bot_challenge: null,
      notify_emails: [],
      redirect_url: null,
      allowed_origins: [],
    });
    // The name's slug alone while it is free; a random suffix only once it is taken.
    expect(res.body.slug).toBe(`contact-uber-uns-${run}`);
    const again = await call('POST', '/v1/forms', { name: `Contact — Über uns! ${run}` });
    expect(again.body.slug).toMatch(new RegExp(`^contact-uber-uns-${run}-[a-z0-9]{6}$`));
    expect(res.body.ingest_url).toBe(`${ctx.platform.config.PUBLIC_BASE_URL}/v1/f/${res.body.slug}`);
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.headers.get('location')).toBe(`/v1/forms/${res.body.id}`);
  });

  it('stores every setting, seals the bot-challenge secret and never returns it', async () => {
    const { call } = await owner();
    const input = {
      name: 'Signup',
      slug: `signup-${Date.now()}`,
      status: 'draft',
      honeypot_field: 'website',
      bot_challenge: { provider: 'turnstile', secret: 'ts-secret-value-123' },
      notify_emails: ['a@example.com', 'b@example.com'],
      redirect_url: 'https://example.com/thanks',
      allowed_origins: ['https://example.com', 'http://localhost:3000'],
    };
    const res = await call('POST', '/v1/forms', input);
    expect(res.status).toBe(201);
    const { bot_challenge: _bc, ...rest } = input;
    expect(res.body).toMatchObject({ ...rest, bot_challenge: { provider: 'turnstile' } });
    expect(res.text).not.toContain('ts-secret-value-123');
    const row = await ctx.platform.db('forms').where({ id: res.body.id }).first();
    expect(row.bot_challenge_secret).not.toContain('ts-secret-value-123');
    expect(ctx.platform.secrets.open(row.bot_challenge_secret)).toBe('ts-secret-value-123');
    const got = await call('GET', `/v1/forms/${res.body.id}`);
    expect(got.body).toEqual(res.body);
    expect(got.text).not.toContain('ts-secret');
  });
});

describe('forms, what works: listing', () => {
  it('lists only the account’s forms, newest first', async () => {
    const { call } = await owner();
    const a = (await call('POST', '/v1/forms', { name: 'A' })).body;
    const b = (await call('POST', '/v1/forms', { name: 'B' })).body;
    const other = await owner();
    await other.call('POST', '/v1/forms', { name: 'Not mine' });
    const list = await call('GET', '/v1/forms');
    expect(list.status).toBe(200);
    expect(list.body.data.map((f: { id: string }) => f.id)).toEqual([b.id, a.id]);
  });

  it('pages the list with a cursor, like submissions, and refuses a cursor it did not issue', async () => {
    const { call } = await owner();
    const made: string[] = [];
    for (const name of ['P1', 'P2', 'P3', 'P4', 'P5'])
      made.unshift((await call('POST', '/v1/forms', { name })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await call('GET', `/v1/forms?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((f: { id: string }) => f.id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(made);
    expect(pages).toBe(3);
    expect((await call('GET', '/v1/forms')).body).toMatchObject({ next_cursor: null });
    for (const bad of [
      'garbage',
      Buffer.from('["2026-01-01T00:00:00.000Z","sub_01hzzzzzzzzzzzzzzzzzzzzzzz"]').toString('base64url'),
    ]) {
      const res = await call('GET', `/v1/forms?cursor=${bad}`);
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ field: 'query/cursor', message: 'is not a valid cursor' }]);
    }
    expect((await call('GET', '/v1/forms?limit=101')).status).toBe(422);
  });
});

describe('forms, what works: changing and deleting', () => {
  it('announces every change and deletion of a form to ingest processes, after it is stored', async () => {
    const { call } = await owner();
    const notices: FormChange[] = [];
    const subscription = subscribeFormChanges(ctx.platform.nats, (c) => notices.push(c));
    try {
      await ctx.platform.nats.nc.flush();
      const form = (await call('POST', '/v1/forms', { name: 'Announced' })).body;
      const slug = `announced-${Date.now()}`;
      for (const change of [
        { status: 'paused' },
        { honeypot_field: 'website' },
        { allowed_origins: ['https://example.com'] },
        { bot_challenge: { provider: 'turnstile', secret: 's' } },
        { slug },
      ])
        expect((await call('PATCH', `/v1/forms/${form.id}`, change)).status).toBe(200);
      expect((await call('PATCH', `/v1/forms/${form.id}`, { status: 'gone' })).status).toBe(422);
      expect((await call('DELETE', `/v1/forms/${form.id}`)).status).toBe(204);
      await eventually(() => notices.filter((n) => n.form_id === form.id).length === 6, { message: 'six notices' });
      const mine = notices.filter((n) => n.form_id === form.id);
      expect(mine.slice(0, 4)).toEqual(Array(4).fill({ form_id: form.id, slug: form.slug }));
      expect(mine.slice(4)).toEqual([{ form_id: form.id, slug }, { form_id: form.id }]);
    } finally {
      subscription.stop();
    }
  });

  it('moves status in every direction, changes fields, and turns the bot challenge off with null', async () => {
    const { call } = await owner();
    const form = (await call('POST', '/v1/forms', { name: 'F', bot_challenge: { provider: 'hcaptcha', secret: 's' } }))
      .body;
    for (const status of ['paused', 'draft', 'live', 'draft', 'paused', 'live']) {
      const res = await call('PATCH', `/v1/forms/${form.id}`, { status });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(status);
    }
    const res = await call('PATCH', `/v1/forms/${form.id}`, {
      name: 'G',
      slug: `g-${Date.now()}`,
      bot_challenge: null,
      notify_emails: ['x@example.com'],
      redirect_url: null,
    });
    expect(res.body).toMatchObject({
      name: 'G',
      bot_challenge: null,
      notify_emails: ['x@example.com'],
      redirect_url: null,
    });
    expect(res.body.ingest_url).toMatch(new RegExp(`/v1/f/${res.body.slug}$`));
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(form.updated_at));
    const row = await ctx.platform.db('forms').where({ id: form.id }).first();
    expect(row.bot_challenge_secret).toBeNull();
  });

  it('deletes a form for good (permanently=true) with its submissions and their stored files', async () => {
    const { account, call } = await owner();
    const form = (await call('POST', '/v1/forms', { name: 'Doomed' })).body;
    const stored = await factories.submission(ctx.platform, {
      accountId: account.id,
      formId: form.id,
      payload: { a: '1' },
      files: [{ field: 'f', filename: 'a.txt', contentType: 'text/plain', content: 'hello' }],
    });
    const key = stored.files[0]?.storage_key as string;
    expect((await call('DELETE', `/v1/forms/${form.id}`)).status).toBe(204);
    expect((await call('GET', `/v1/forms/${form.id}`)).status).toBe(404);
    // In the trash, whole; then deleted for good.
    expect(await ctx.platform.blobs.get(key)).toBeDefined();
    expect((await call('DELETE', `/v1/forms/${form.id}?permanently=true`)).status).toBe(204);
    expect(await ctx.platform.db('submissions').where({ form_id: form.id }).first()).toBeUndefined();
    await expect(ctx.platform.blobs.get(key)).rejects.toThrow();
  });
});

describe('forms, what errors', () => {
  it('409 conflict when the slug is taken (by any account)', async () => {
    const { call } = await owner();
    const slug = `taken-${Date.now()}`;
    expect((await call('POST', '/v1/forms', { name: 'A', slug })).status).toBe(201);
    const other = await owner();
    const res = await other.call('POST', '/v1/forms', { name: 'B', slug });
    expect(res.status).toBe(409);
    expect(res.body.type).toMatch(/\/conflict$/);
    const mine = (await other.call('POST', '/v1/forms', { name: 'C' })).body;
    expect((await other.call('PATCH', `/v1/forms/${mine.id}`, { slug })).status).toBe(409);
  });

  it('422 for a honeypot named like a bot-challenge token field, which every widget post fills', async () => {
    const { call } = await owner();
    for (const honeypot_field of [
      'bot-challenge-response',
      'cf-turnstile-response',
      'h-captcha-response',
      'g-recaptcha-response',
    ]) {
      const res = await call('POST', '/v1/forms', { name: 'Trap', honeypot_field });
      expect([honeypot_field, res.status, res.body.errors?.[0]?.field]).toEqual([
        honeypot_field,
        422,
        'body/honeypot_field',
      ]);
    }
  });

  it('422 naming each bad field', async () => {
    const { call } = await owner();
    const res = await call('POST', '/v1/forms', {
      slug: 'Not A Slug!',
      status: 'archived',
      honeypot_field: '',
      bot_challenge: { provider: 'captchax' },
      notify_emails: ['nope'],
      redirect_url: 'javascript:alert(1)',
      allowed_origins: ['https://x.com/path'],
      colour: 'red',
    });
    expect(res.status).toBe(422);
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    for (const f of [
      'body/name',
      'body/slug',
      'body/status',
      'body/honeypot_field',
      'body/bot_challenge',
      'body/notify_emails/0',
      'body/redirect_url',
      'body/allowed_origins/0',
      'body/colour',
    ])
      expect(fields).toContain(f);
    expect((await call('GET', '/v1/forms')).body.data).toEqual([]);
  });

  it('404 for an unknown form id', async () => {
    const { call } = await owner();
    for (const [method, body] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const res = await call(method, '/v1/forms/frm_doesnotexist', body);
      expect(res.status).toBe(404);
      expect(res.body.type).toMatch(/\/not-found$/);
    }
  });
});

describe('forms, what must be refused', () => {
  it('401 without a key, 403 invalid-key for a revoked key, 403 insufficient-scope for a submission key', async () => {
    const { account } = await owner();
    expect((await api(ctx.url)('GET', '/v1/forms')).status).toBe(401);
    const revoked = await factories.apiKey(ctx.platform.db, account.id, 'management', { revoked: true });
    const r1 = await api(ctx.url, revoked)('POST', '/v1/forms', { name: 'x' });
    expect([r1.status, r1.body.type.split('/').pop()]).toEqual([403, 'invalid-key']);
    const sub = await factories.apiKey(ctx.platform.db, account.id, 'submission');
    const r2 = await api(ctx.url, sub)('GET', '/v1/forms');
    expect([r2.status, r2.body.type.split('/').pop()]).toEqual([403, 'insufficient-scope']);
  });

  it('404 when another account reads, changes or deletes the form, which stays untouched', async () => {
    const { call } = await owner();
    const form = (await call('POST', '/v1/forms', { name: 'Mine' })).body;
    const intruder = await owner();
    expect((await intruder.call('GET', `/v1/forms/${form.id}`)).status).toBe(404);
    expect((await intruder.call('PATCH', `/v1/forms/${form.id}`, { status: 'paused' })).status).toBe(404);
    expect((await intruder.call('DELETE', `/v1/forms/${form.id}`)).status).toBe(404);
    expect((await call('GET', `/v1/forms/${form.id}`)).body).toEqual(form);
  });
});

describe('forms: the ingest rate limit an owner sees and sets', () => {
  it('shows the default, the plan’s most and the refusals; sets the form’s own within the plan, 422 beyond it', async () => {
    const { call } = await owner();
    const { body: form } = await call('POST', '/v1/forms', { name: 'Contact' });
    expect(form.rate_limit).toBeNull();
    const { config } = ctx.platform;
    const first = await call('GET', `/v1/forms/${form.id}/rate-limit`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      form_id: form.id,
      limit: config.RATE_LIMIT_POINTS,
      own: null,
      default: config.RATE_LIMIT_POINTS,
      max: 600,
      plan: 'Pro',
      window_seconds: config.RATE_LIMIT_WINDOW_SECONDS,
      refused: { today: 0, last_7_days: 0, last_30_days: 0, last_at: null },
    });

    const set = await call('PATCH', `/v1/forms/${form.id}`, { rate_limit: 120 });
    expect([set.status, set.body.rate_limit]).toEqual([200, 120]);
    expect((await call('GET', `/v1/forms/${form.id}/rate-limit`)).body).toMatchObject({ limit: 120, own: 120 });

    for (const [value, message] of [
      [601, 'must be at most 600 on the Pro plan'],
      [0, expect.stringMatching(/>= 1/)],
      [1.5, expect.any(String)],
    ] as const) {
      const refused = await call('PATCH', `/v1/forms/${form.id}`, { rate_limit: value });
      expect([refused.status, refused.body.type]).toEqual([422, expect.stringMatching(/validation-failed$/)]);
      expect(refused.body.errors).toEqual([{ field: 'body/rate_limit', message }]);
    }
    const created = await call('POST', '/v1/forms', { name: 'Quote', rate_limit: 601 });
    expect(created.status).toBe(422);
    expect((await call('GET', `/v1/forms/${form.id}`)).body.rate_limit).toBe(120);

    // Ingest's refusals, as it writes them: the last 30 UTC days, by day.
    const now = Date.now();
    const day = (ago: number) => new Date(now - ago * 86_400_000);
    await ctx.platform.db('rate_limit_refusals').insert([
      { form_id: form.id, day: day(0).toISOString().slice(0, 10), refused: 17, last_at: day(0) },
      { form_id: form.id, day: day(3).toISOString().slice(0, 10), refused: 5, last_at: day(3) },
      { form_id: form.id, day: day(20).toISOString().slice(0, 10), refused: 2, last_at: day(20) },
      { form_id: form.id, day: day(40).toISOString().slice(0, 10), refused: 99, last_at: day(40) },
    ]);
    const counted = await call('GET', `/v1/forms/${form.id}/rate-limit`);
    expect(counted.body.refused).toEqual({
      today: 17,
      last_7_days: 22,
      last_30_days: 24,
      last_at: day(0).toISOString(),
    });
    // Back to the default; another account's form is not found.
    expect((await call('PATCH', `/v1/forms/${form.id}`, { rate_limit: null })).body.rate_limit).toBeNull();
    const other = await owner();
    expect((await other.call('GET', `/v1/forms/${form.id}/rate-limit`)).status).toBe(404);
  });
});

import http from 'node:http';
import net from 'node:net';
import { eventually, factories, listen, useStarted } from '@intake/shared/testing';
import { DRAIN_LIMIT_BYTES } from '../src/routes/ingest.routes';
import { accountWithForm, slugOf, startIngest, submissionsOf, type IngestHarness } from './helpers';

/** Unknown, paused and draft forms, the monthly quota and the per-IP rate limit (RATE_LIMIT_POINTS of 3). */
function formQuotaAndRateCases(h: IngestHarness) {
  it('404 form-not-found for an unknown slug, as a problem document', async () => {
    const res = await fetch(`${h.url}/v1/f/nope-${Date.now()}`, {
      method: 'POST',
      body: new URLSearchParams({ a: '1' }),
    });
    const body = await res.json();
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(body).toMatchObject({
      type: `${h.platform.config.PROBLEMS_URL}/form-not-found`,
      title: expect.any(String),
      status: 404,
      detail: expect.any(String),
    });
  });

  it.each(['paused', 'draft'] as const)('403 form-not-live for a %s form', async (status) => {
    const { form, post } = await accountWithForm(h, { form: { status } });
    const res = await post({ a: '1' });
    expect([res.status, slugOf(res)]).toEqual([403, 'form-not-live']);
    expect(await submissionsOf(h, form.id)).toHaveLength(0);
  });

  it('402 quota-exceeded with limit once the month’s quota is used, storing nothing', async () => {
    const { account, form, post } = await accountWithForm(h, { quota: 1 });
    expect((await post({ a: '1' })).status).toBe(201);
    const res = await post({ a: '2' });
    expect([res.status, slugOf(res), res.body.limit]).toEqual([402, 'quota-exceeded', 1]);
    expect(await submissionsOf(h, form.id)).toHaveLength(1);
    expect((await h.platform.db('usage_counters').where({ account_id: account.id }).first()).used).toBe(1);
  });

  it('402 before the body is parsed: an unparseable body of an over-quota account still gets quota-exceeded', async () => {
    const { post } = await accountWithForm(h, { quota: 0 });
    const res = await post('{not json', { 'content-type': 'application/json' });
    expect([res.status, slugOf(res), res.body.limit]).toEqual([402, 'quota-exceeded', 0]);
  });

  it('never counts spam toward the quota', async () => {
    const { account, post } = await accountWithForm(h, { quota: 1 });
    for (let i = 0; i < 2; i++) expect((await post({ _gotcha: 'x' })).body).toEqual({ ok: true, status: 'accepted' });
    expect((await post({ a: '1' })).status).toBe(201);
    expect((await h.platform.db('usage_counters').where({ account_id: account.id }).first()).used).toBe(1);
  });

  it('429 rate-limited with Retry-After past RATE_LIMIT_POINTS per IP per form', async () => {
    const { post } = await accountWithForm(h);
    const other = await accountWithForm(h);
    for (let i = 0; i < 3; i++) expect((await post({ i: String(i) })).status).toBe(201);
    const res = await post({ i: '4' });
    expect([res.status, slugOf(res)]).toEqual([429, 'rate-limited']);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect((await other.post({ i: '1' })).status).toBe(201);
  });

  it('posts sent at once share the budget as if sent one by one: exactly RATE_LIMIT_POINTS get through per form', async () => {
    const one = await accountWithForm(h);
    const two = await accountWithForm(h);
    // Posts arriving in the same turn of the event loop take their points together (one Redis call per IP and form).
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, (_, i) => one.post({ i: String(i) })),
      ...Array.from({ length: 4 }, (_, i) => two.post({ i: String(i) })),
    ]);
    const statuses = answers.map((res) => res.status);
    expect(statuses.slice(0, 5).sort()).toEqual([201, 201, 201, 429, 429]);
    expect(statuses.slice(5).sort()).toEqual([201, 201, 201, 429]);
    expect(await submissionsOf(h, one.form.id)).toHaveLength(3);
    expect(await submissionsOf(h, two.form.id)).toHaveLength(3);
  });
}

/** A form's own rate limit (`forms.rate_limit`), held to its plan's most, and the refusals counted for its owner. */
function formRateLimitCases(h: IngestHarness) {
  it('a form’s own rate_limit replaces RATE_LIMIT_POINTS (within its plan’s most), and each 429 is counted for its owner', async () => {
    const strict = await accountWithForm(h);
    const lenient = await accountWithForm(h);
    await h.platform.db('forms').where({ id: strict.form.id }).update({ rate_limit: 1 });
    await h.platform.db('forms').where({ id: lenient.form.id }).update({ rate_limit: 5 });
    const strictAnswers = await Promise.all(Array.from({ length: 4 }, (_, i) => strict.post({ i: String(i) })));
    const lenientAnswers = [];
    for (let i = 0; i < 6; i++) lenientAnswers.push((await lenient.post({ i: String(i) })).status);
    expect(strictAnswers.map((res) => res.status).sort()).toEqual([201, 429, 429, 429]);
    expect(lenientAnswers).toEqual([201, 201, 201, 201, 201, 429]);
    const refusals = (formId: string) =>
      h.platform.db('rate_limit_refusals').where({ form_id: formId }).select('refused', 'last_at');
    // Written within a second, in one statement for the posts of both forms.
    await eventually(async () => (await refusals(strict.form.id))[0]?.refused === 3);
    await eventually(async () => (await refusals(lenient.form.id))[0]?.refused === 1);
  });

  it('a form’s rate_limit above its plan’s most is held to the plan’s (a plan changed after it was set)', async () => {
    const { form, post } = await accountWithForm(h);
    const [{ max }] = await h.platform.db('plans').where({ id: 'pro' }).select('max_rate_limit as max');
    expect(max).toBe(600);
    await h.platform.db('plans').where({ id: 'pro' }).update({ max_rate_limit: 2 });
    try {
      await h.platform.db('forms').where({ id: form.id }).update({ rate_limit: 50 });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await post({ i: String(i) })).status);
      expect(statuses).toEqual([201, 201, 429]);
    } finally {
      await h.platform.db('plans').where({ id: 'pro' }).update({ max_rate_limit: 600 });
    }
  });
}

/** Bodies that do not parse, would pollute prototypes, are too large or of another type. */
function bodyCases(h: IngestHarness) {
  it.each([
    ['malformed JSON', '{"a": ', 'application/json'],
    ['a JSON array', '["a"]', 'application/json'],
    [
      'JSON that is not UTF-8',
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      'application/json',
    ],
    ['a urlencoded body that is not UTF-8', 'name=%C3%28', 'application/x-www-form-urlencoded'],
    ['a multipart body without its boundary', '--x\r\n', 'multipart/form-data'],
    [
      'a truncated multipart body',
      '--b\r\ncontent-disposition: form-data; name="a"\r\n\r\nvalue',
      'multipart/form-data; boundary=b',
    ],
  ])('400 bad-body for %s', async (_name, body, type) => {
    const { form, post } = await accountWithForm(h);
    const res = await post(body as string, { 'content-type': type });
    expect([res.status, slugOf(res)]).toEqual([400, 'bad-body']);
    expect(await submissionsOf(h, form.id)).toHaveLength(0);
  });

  it.each([
    ['JSON nested 40 levels', `{"a":${'['.repeat(40)}${']'.repeat(40)}}`, 'application/json'],
    ['a field name of 300 characters', `${'n'.repeat(300)}=1`, 'application/x-www-form-urlencoded'],
  ])('422 validation-failed for %s', async (_name, body, type) => {
    const { form, post } = await accountWithForm(h);
    const res = await post(body, { 'content-type': type });
    expect([res.status, slugOf(res)]).toEqual([422, 'validation-failed']);
    expect(res.body.errors?.length).toBeGreaterThan(0);
    expect(await submissionsOf(h, form.id)).toHaveLength(0);
  });

  it('stores "__proto__" only as a plain key of a nested JSON string value', async () => {
    const { form, post } = await accountWithForm(h);
    const res = await post('{"note": "__proto__ is fine as a value"}', { 'content-type': 'application/json' });
    expect(res.status).toBe(201);
    expect((await submissionsOf(h, form.id))[0].payload).toEqual({ note: '__proto__ is fine as a value' });
  });

  it('413 body-too-large for a JSON or form body over 1 MiB', async () => {
    const { post } = await accountWithForm(h);
    const res = await post(JSON.stringify({ a: 'x'.repeat(1024 * 1024 + 10) }), {
      'content-type': 'application/json',
    });
    expect([res.status, slugOf(res)]).toEqual([413, 'body-too-large']);
  });

  it('415 unsupported-media-type for other content types, charsets and compressed bodies', async () => {
    const { post } = await accountWithForm(h);
    expect(slugOf(await post('hello', { 'content-type': 'text/plain' }))).toBe('unsupported-media-type');
    expect(slugOf(await post('a=1', { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' }))).toBe(
      'unsupported-media-type',
    );
    expect(
      (await post('a=1', { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' })).status,
    ).toBe(415);
  });

  it('400 bad-body for a post with no body and no content type, storing and counting nothing', async () => {
    const { account, form, post } = await accountWithForm(h);
    const res = await post();
    expect([res.status, slugOf(res)]).toEqual([400, 'bad-body']);
    expect(await submissionsOf(h, form.id)).toHaveLength(0);
    expect(await h.platform.db('usage_counters').where({ account_id: account.id }).first()).toBeUndefined();
  });

  it('422 for an Idempotency-Key that is too long', async () => {
    const { post } = await accountWithForm(h);
    const res = await post({ a: '1' }, { 'idempotency-key': 'k'.repeat(300) });
    expect([res.status, slugOf(res)]).toEqual([422, 'validation-failed']);
  });
}

/** How a connection ends after a post refused before its body was read. */
function unreadBodyCases(h: IngestHarness) {
  it('answers 413 before an over-large body, then reads the rest it declared and keeps the connection; a huge one closes', async () => {
    const { form } = await accountWithForm(h);
    const { port } = new URL(h.url);
    const head = (length: number) =>
      `POST /v1/f/${form.slug} HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;
    const socket = net.connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const rest = 2 * 1024 * 1024;
    socket.write(head(rest));
    // The answer comes before the body does; the body is sent after it, in pieces, as a slow client would.
    await eventually(() => received.includes('413 Payload Too Large') && received.includes('body-too-large'));
    expect(received).not.toMatch(/connection: close/i);
    for (let sent = 0; sent < rest; sent += 64 * 1024) socket.write(Buffer.alloc(64 * 1024, 0x78));
    received = '';
    socket.write(`GET /v1/f/${form.slug} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await eventually(() => /^HTTP\/1\.1 \d{3}/.test(received));
    socket.end();
    await closed;

    // A client that asked to close sends its body only after the answer and our end of the connection (FIN) came: it
    // still goes in, rather than into a reset, and the connection ends when the client's does.
    const closing = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
    let closingAnswer = '';
    const errors: string[] = [];
    closing.on('data', (c: Buffer) => (closingAnswer += c.toString('latin1')));
    closing.on('error', (err: NodeJS.ErrnoException) => errors.push(err.code ?? err.message));
    const ended = new Promise<void>((resolve) => closing.on('end', () => resolve()));
    const closingClosed = new Promise<void>((resolve) => closing.on('close', () => resolve()));
    closing.write(head(rest).replace('Host: x', 'Host: x\r\nConnection: close'));
    await ended;
    expect(closingAnswer).toMatch(/^HTTP\/1\.1 413 /);
    for (let sent = 0; sent < rest; sent += 64 * 1024) {
      await new Promise((resolve) => setImmediate(resolve));
      closing.write(Buffer.alloc(64 * 1024, 0x78));
    }
    closing.end();
    await closingClosed;
    expect(errors).toEqual([]);

    const huge = net.connect(Number(port), '127.0.0.1');
    let answer = '';
    huge.on('data', (c: Buffer) => (answer += c.toString('latin1')));
    const hugeClosed = new Promise<void>((resolve) => huge.on('close', () => resolve()));
    huge.on('error', () => undefined);
    huge.write(head(DRAIN_LIMIT_BYTES + 1));
    await hugeClosed;
    expect(answer).toMatch(/^HTTP\/1\.1 413 .*connection: close/is);
  });
}

describe('POST /v1/f/:slug — what errors', () => {
  const h = useStarted(() => startIngest({ RATE_LIMIT_POINTS: 3, RATE_LIMIT_WINDOW_SECONDS: 60 }));

  formQuotaAndRateCases(h);
  formRateLimitCases(h);

  describe('bodies', () => bodyCases(h));
  describe('a body refused before it was read', () => unreadBodyCases(h));
});

/**
 * Ingest checking bot challenges against a real siteverify endpoint on loopback speaking the
 * Turnstile/hCaptcha/reCAPTCHA protocol: `seen` holds the forms the endpoint was sent and `provider.status`
 * the HTTP status it answers with, both reset before each test.
 */
function useSiteverify() {
  const h = {} as IngestHarness;
  const seen: URLSearchParams[] = [];
  const provider = { status: 200 };
  let endpoint: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    endpoint = await listen((req: http.IncomingMessage, res: http.ServerResponse) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const form = new URLSearchParams(raw);
        seen.push(form);
        res.writeHead(provider.status, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            success: form.get('secret') === 'site-secret' && form.get('response') === 'good-token',
            'error-codes': [],
          }),
        );
      });
    });
    Object.assign(h, await startIngest({ BOT_CHALLENGE_VERIFY_URL: `${endpoint.url}/siteverify` }));
  });
  afterAll(async () => {
    await h.close();
    await endpoint.close();
  });
  beforeEach(() => {
    seen.length = 0;
    provider.status = 200;
  });
  return { h, seen, provider };
}

type Siteverify = ReturnType<typeof useSiteverify>;

function submissionKeyCases(h: IngestHarness) {
  it('403 invalid-key for an unknown, malformed or revoked key, another account’s key, or a management key', async () => {
    const { account, form, post } = await accountWithForm(h);
    const other = await factories.account(h.platform.db);
    const keys = [
      'svc_sub_unknownunknownunknown',
      'not-a-key',
      await factories.apiKey(h.platform.db, account.id, 'submission', { revoked: true }),
      await factories.apiKey(h.platform.db, other.id, 'submission'),
      account.managementKey,
    ];
    for (const key of keys) {
      const res = await post({ a: '1' }, { authorization: `Bearer ${key}` });
      expect([key, res.status, slugOf(res)]).toEqual([key, 403, 'invalid-key']);
    }
    const basic = await post({ a: '1' }, { authorization: 'Basic dXNlcjpwYXNz' });
    expect(slugOf(basic)).toBe('invalid-key');
    expect(await submissionsOf(h, form.id)).toHaveLength(0);
  });
}

function emptySubmissionCases({ h, seen }: Siteverify) {
  it('is refused with 422 when nothing is left once the control fields are out, and stores or counts nothing', async () => {
    const { account, form, post } = await accountWithForm(h, {
      form: { bot_challenge_provider: 'turnstile', bot_challenge_secret: h.platform.secrets.seal('s') },
    });
    const empties: Parameters<typeof post>[0][] = [
      {},
      new URLSearchParams(),
      new URLSearchParams({ name: '', message: '  ', _gotcha: '' }),
      { 'bot-challenge-response': 'good-token' },
    ];
    for (const body of empties) {
      const res = await post(body);
      expect([res.status, slugOf(res), res.body.errors]).toEqual([
        422,
        'validation-failed',
        [{ field: 'body', message: expect.stringContaining('no field with a value') }],
      ]);
    }
    expect(seen).toHaveLength(0);
    expect(await submissionsOf(h, form.id)).toHaveLength(0);
    expect(await h.platform.db('usage_counters').where({ account_id: account.id })).toEqual([]);
    expect(await h.platform.db('outbox').whereRaw("payload->>'form_id' = ?", [form.id])).toEqual([]);
  });

  it('is still answered as spam when its honeypot is filled, and a post with only a file is not empty', async () => {
    const { form, post } = await accountWithForm(h);
    expect((await post({ _gotcha: 'http://spam.example' })).status).toBe(200);
    const onlyFile = new FormData();
    onlyFile.append('cv', new Blob(['x']), 'cv.txt');
    expect((await post(onlyFile)).status).toBe(201);
    expect((await submissionsOf(h, form.id)).map((s: { status: string }) => s.status).sort()).toEqual([
      'received',
      'spam',
    ]);
  });
}

function botChallengeCases({ h, seen, provider }: Siteverify) {
  async function challengedForm() {
    return accountWithForm(h, {
      form: { bot_challenge_provider: 'turnstile', bot_challenge_secret: h.platform.secrets.seal('site-secret') },
    });
  }

  it('accepts a token the provider verifies, sending secret, response and remoteip form-encoded', async () => {
    const { form, post } = await challengedForm();
    const res = await post(new URLSearchParams({ name: 'Ada', 'bot-challenge-response': 'good-token' }));
    expect(res.status).toBe(201);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.get('secret')).toBe('site-secret');
    expect(seen[0]?.get('response')).toBe('good-token');
    expect(seen[0]?.get('remoteip')).toMatch(/127\.0\.0\.1|::1/);
    expect((await submissionsOf(h, form.id))[0].payload).toEqual({ name: 'Ada' });
  });

  it('403 challenge-failed for a missing token (without asking the provider) or a rejected one', async () => {
    const { form, post } = await challengedForm();
    const missing = await post({ name: 'Ada' });
    const wrong = await post({ name: 'Ada', 'bot-challenge-response': 'bad-token' });
    expect([missing.status, slugOf(missing)]).toEqual([403, 'challenge-failed']);
    expect([wrong.status, slugOf(wrong)]).toEqual([403, 'challenge-failed']);
    expect(seen).toHaveLength(1);
    expect(await submissionsOf(h, form.id)).toHaveLength(0);
  });

  it('keeps the submission as spam (reason challenge-unavailable) when the provider cannot answer', async () => {
    const { form, post } = await challengedForm();
    provider.status = 503;
    const res = await post({ name: 'Ada', 'bot-challenge-response': 'good-token' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, status: 'accepted' });
    const [row] = await submissionsOf(h, form.id);
    expect(row).toMatchObject({ status: 'spam', spam_reason: 'challenge-unavailable', payload: { name: 'Ada' } });
  });

  it('keeps the files of a post held because the provider cannot answer, so its owner can rescue all of it', async () => {
    const { form, post } = await challengedForm();
    provider.status = 503;
    const body = new FormData();
    body.append('name', 'Ada');
    body.append('bot-challenge-response', 'good-token');
    body.append('cv', new Blob(['my cv']), 'cv.txt');
    const res = await post(body);
    expect([res.status, res.body]).toEqual([200, { ok: true, status: 'accepted' }]);
    const [row] = await submissionsOf(h, form.id);
    expect(row).toMatchObject({ status: 'spam', spam_reason: 'challenge-unavailable', file_count: 1 });
    const [file] = await h.platform.db('submission_files').where({ submission_id: row.id });
    expect({ ...file, size: Number(file.size) }).toMatchObject({ field: 'cv', filename: 'cv.txt', size: 5 });
    const chunks: Buffer[] = [];
    for await (const c of await h.platform.blobs.get(file.storage_key)) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('my cv');
  });

  it('does not ask the provider about a post caught by the honeypot', async () => {
    const { post } = await challengedForm();
    const res = await post({ name: 'bot', _gotcha: 'x' });
    expect(res.status).toBe(200);
    expect(seen).toHaveLength(0);
  });
}

function providerFieldCases({ h, seen }: Siteverify) {
  it.each(['cf-turnstile-response', 'h-captcha-response', 'g-recaptcha-response'])(
    'reads the token from the provider widget’s own field %s, and strips it from the payload',
    async (field) => {
      const { form, post } = await accountWithForm(h, {
        form: { bot_challenge_provider: 'turnstile', bot_challenge_secret: h.platform.secrets.seal('site-secret') },
      });
      const res = await post(
        new URLSearchParams([
          ['name', 'Ada'],
          [field, 'good-token'],
        ]),
      );
      expect(res.status).toBe(201);
      expect(seen.map((s) => s.get('response'))).toEqual(['good-token']);
      expect((await submissionsOf(h, form.id))[0].payload).toEqual({ name: 'Ada' });
    },
  );
}

describe('POST /v1/f/:slug — what must be refused', () => {
  const siteverify = useSiteverify();

  describe('submission keys', () => submissionKeyCases(siteverify.h));
  describe('an empty submission', () => emptySubmissionCases(siteverify));
  describe('bot challenge', () => botChallengeCases(siteverify));
  describe('bot challenge, from a provider’s widget', () => providerFieldCases(siteverify));
});

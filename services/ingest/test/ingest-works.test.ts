import Ajv from 'ajv';
import { SubmissionEvent } from '@intake/shared/contracts';
import { eventually, useStarted } from '@intake/shared/testing';
import {
  accountWithForm,
  publishedEvent,
  publishedEvents,
  startIngest,
  submissionsOf,
  type IngestHarness,
} from './helpers';

const validEvent = new Ajv({ strict: false }).compile(SubmissionEvent);

/** What is stored of a post: its fields as strings, without the honeypot and bot-challenge fields. */
function storedPayloadCases(h: IngestHarness) {
  it('stores a urlencoded post and answers 201 with id, received_at, status and files', async () => {
    const { form, post } = await accountWithForm(h);
    const res = await post(
      new URLSearchParams([
        ['name', 'Ada'],
        ['email', 'ada@example.com'],
        ['_gotcha', ''],
      ]),
    );
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^sub_/),
      received_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      status: 'received',
      files: 0,
    });
    const [row] = await submissionsOf(h, form.id);
    expect(row).toMatchObject({
      id: res.body.id,
      status: 'received',
      payload: { name: 'Ada', email: 'ada@example.com' },
      file_count: 0,
    });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('stores JSON values as strings, non-strings JSON-stringified, names as sent', async () => {
    const { form, post } = await accountWithForm(h);
    const res = await post({
      'Full Name': 'Ada',
      age: 36,
      ok: true,
      none: null,
      tags: ['a', 'b'],
      nested: { x: 1 },
      'emoji ✓': 'é',
    });
    expect(res.status).toBe(201);
    const [row] = await submissionsOf(h, form.id);
    expect(row.payload).toEqual({
      'Full Name': 'Ada',
      age: '36',
      ok: 'true',
      none: 'null',
      tags: '["a","b"]',
      nested: '{"x":1}',
      'emoji ✓': 'é',
    });
  });

  it('stores a repeated form field as the JSON array of its values, a single one as its string', async () => {
    const { form, post } = await accountWithForm(h);
    const res = await post('topic=a&topic=b%2C+c&one=1&plus=a+b&empty=', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(res.status).toBe(201);
    const [row] = await submissionsOf(h, form.id);
    expect(row.payload).toEqual({ topic: '["a","b, c"]', one: '1', plus: 'a b', empty: '' });
  });

  it('removes the honeypot field and bot-challenge-response from the stored payload', async () => {
    const { form, post } = await accountWithForm(h, { form: { honeypot_field: 'website' } });
    const res = await post(new URLSearchParams({ name: 'Ada', website: '', 'bot-challenge-response': 'tok' }));
    expect(res.status).toBe(201);
    expect((await submissionsOf(h, form.id))[0].payload).toEqual({ name: 'Ada' });
  });
}

/** The events a post writes and publishes, and what it counts. */
function eventAndCountCases(h: IngestHarness) {
  it('writes a submission.created event, published to JetStream with its id as Nats-Msg-Id, then removed from the outbox', async () => {
    const { account, form, post } = await accountWithForm(h);
    const res = await post({ message: 'hello' });
    const seen = await publishedEvent(h, 'submission.created', res.body.id as string);
    expect(validEvent(seen.event)).toBe(true);
    expect(seen.event).toMatchObject({
      submission_id: res.body.id,
      form_id: form.id,
      account_id: account.id,
      status: 'received',
      payload: { message: 'hello' },
      files: [],
      file_bytes: 0,
      form_name: 'Test form',
    });
    expect(seen.msgId).toBe(seen.event.event_id);
    // Its row goes when the relay's transaction commits, just after the stream acknowledged it.
    await eventually(
      async () => (await h.platform.db('outbox').where({ event_id: seen.event.event_id as string })).length === 0,
      { message: 'the published row removed' },
    );
  });

  it('counts a received submission in usage_counters for the UTC month', async () => {
    const { account, post } = await accountWithForm(h);
    await post({ a: '1' });
    await post({ a: '2' });
    const counter = await h.platform.db('usage_counters').where({ account_id: account.id }).first();
    expect(counter.used).toBe(2);
    const now = new Date();
    expect(new Date(counter.period).toISOString().slice(0, 7)).toBe(
      `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`,
    );
  });

  it('stores a filled honeypot as spam: 200 { ok, status: "accepted" }, not counted, a submission.spam event only', async () => {
    const { account, form, post } = await accountWithForm(h);
    const res = await post(new URLSearchParams({ name: 'bot', _gotcha: 'http://spam.example' }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, status: 'accepted' });
    const [row] = await submissionsOf(h, form.id);
    expect(row).toMatchObject({ status: 'spam', spam_reason: 'honeypot', payload: { name: 'bot' } });
    expect(await h.platform.db('usage_counters').where({ account_id: account.id }).first()).toBeUndefined();
    const seen = await publishedEvent(h, 'submission.spam', row.id);
    expect(validEvent(seen.event)).toBe(true);
    expect(seen.event).toMatchObject({ submission_id: row.id, status: 'spam' });
    const created = await publishedEvents(h, 'submission.created');
    expect(created.some((e) => e.event.submission_id === row.id)).toBe(false);
  });
}

/** Idempotency keys and submission keys. */
function keyCases(h: IngestHarness) {
  it('replays a known Idempotency-Key: 200 with the original id and idempotent_replay, no new submission', async () => {
    const { form, post } = await accountWithForm(h);
    const first = await post({ a: '1' }, { 'idempotency-key': 'order-42' });
    const again = await post({ a: '2' }, { 'idempotency-key': 'order-42' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: first.body.id, status: 'received', idempotent_replay: true });
    expect(await submissionsOf(h, form.id)).toHaveLength(1);
  });

  it('scopes Idempotency-Keys per form and forgets them after 24 hours', async () => {
    const a = await accountWithForm(h);
    const b = await accountWithForm(h);
    expect((await a.post({ x: '1' }, { 'idempotency-key': 'k' })).status).toBe(201);
    expect((await b.post({ x: '1' }, { 'idempotency-key': 'k' })).status).toBe(201);
    await h.platform
      .db('idempotency_keys')
      .where({ form_id: a.form.id, key: 'k' })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const reused = await a.post({ x: '2' }, { 'idempotency-key': 'k' });
    expect(reused.status).toBe(201);
    expect(await submissionsOf(h, a.form.id)).toHaveLength(2);
    const key = await h.platform.db('idempotency_keys').where({ form_id: a.form.id, key: 'k' }).first();
    expect(key.submission_id).toBe(reused.body.id);
    expect(key.expires_at.getTime() - key.created_at.getTime()).toBe(24 * 3600 * 1000);
  });

  it('accepts a valid submission key of the form’s account', async () => {
    const { account, post } = await accountWithForm(h);
    const { factories } = await import('@intake/shared/testing');
    const key = await factories.apiKey(h.platform.db, account.id, 'submission');
    expect((await post({ a: '1' }, { authorization: `Bearer ${key}` })).status).toBe(201);
  });
}

/** Answers for browsers: redirects, a thank-you page, CORS. */
function browserCases(h: IngestHarness) {
  const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

  it('sends a plain HTML form post on with 303 to the form’s redirect_url', async () => {
    const { post } = await accountWithForm(h, { form: { redirect_url: 'https://example.com/thanks' } });
    const res = await post(new URLSearchParams({ name: 'Ada' }), { accept: browserAccept });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('https://example.com/thanks');
  });

  it('shows a small thank-you page when the form has no redirect_url', async () => {
    const { post } = await accountWithForm(h);
    const res = await post(new URLSearchParams({ name: 'Ada' }), { accept: browserAccept });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('Thank you');
  });

  it('gives a JSON post from a browser the spec’s JSON', async () => {
    const { post } = await accountWithForm(h, { form: { redirect_url: 'https://example.com/thanks' } });
    const res = await post({ name: 'Ada' }, { accept: '*/*' });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('received');
  });

  it('answers every request, errors included, with Access-Control-Allow-Origin: *', async () => {
    const { post } = await accountWithForm(h);
    const ok = await post({ a: '1' }, { origin: 'https://site.example' });
    const missing = await fetch(`${h.url}/v1/f/no-such-form`, {
      method: 'POST',
      headers: { origin: 'https://site.example' },
    });
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers the preflight of a JSON post with Authorization and Idempotency-Key', async () => {
    const { form } = await accountWithForm(h);
    const res = await fetch(`${h.url}/v1/f/${form.slug}`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://site.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,idempotency-key',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const header of ['authorization', 'content-type', 'idempotency-key']) expect(allowed).toContain(header);
  });
}

describe('POST /v1/f/:slug — what works', () => {
  const h = useStarted(() => startIngest({}, { relay: true }));

  storedPayloadCases(h);
  eventAndCountCases(h);
  keyCases(h);

  describe('browsers', () => browserCases(h));
});

describe('POST /v1/f/:slug — its events, with no outbox relay running', () => {
  const h = useStarted(() => startIngest({}, { publishAfterCommit: true }));

  it('publishes the events of the posts it stored right after their commit, and removes their outbox rows', async () => {
    const { form, post } = await accountWithForm(h);
    const answers = await Promise.all(['a', 'b', 'c'].map((message) => post({ message })));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
    for (const res of answers) {
      const seen = await publishedEvent(h, 'submission.created', res.body.id as string);
      expect(seen.msgId).toBe(seen.event.event_id);
      expect(validEvent(seen.event)).toBe(true);
    }
    await eventually(
      async () => (await h.platform.db('outbox').whereRaw("payload->>'form_id' = ?", [form.id])).length === 0,
      { message: 'the published rows removed' },
    );
    const published = (await publishedEvents(h, 'submission.created')).filter((e) => e.event.form_id === form.id);
    expect(published).toHaveLength(3);
  });
});

import { Value } from '@sinclair/typebox/value';
import { newId, periodKey, SubmissionEvent } from '@intake/shared/contracts';
import { fileDownloadUrl } from '@intake/shared/http';
import { emptyTestDatabaseUrl, factories, useStarted } from '@intake/shared/testing';
import { purgeDue } from '../src/lifecycle/purge';
import { api, ownerWithForm as ownerWithFormOf, startManagement } from './helpers';

// A database of its own: the purge these tests run 31 days ahead would purge every other file's data too.
const ctx = useStarted(async () => startManagement({ DATABASE_URL: await emptyTestDatabaseUrl('submissions') }));

const ownerWithForm = () => ownerWithFormOf(ctx);
/** Each submission route as [method, path, body] for a form and one of its submissions (PATCH sets `status`). */
const everySubmissionRoute = (formId: string, id: string, status: string): [string, string, unknown?][] => [
  ['GET', `/v1/forms/${formId}/submissions`],
  ['GET', `/v1/forms/${formId}/export.csv`],
  ['GET', `/v1/forms/${formId}/export.ndjson`],
  ['GET', `/v1/submissions/${id}`],
  ['PATCH', `/v1/submissions/${id}`, { status }],
  ['DELETE', `/v1/submissions/${id}`],
];
const at = (iso: string) => new Date(iso);

/** The purge as it runs TRASH_DAYS (30) and a day after now: what the trash holds goes for good. */
const emptyTrash = () =>
  purgeDue({ ...ctx.platform, clock: { now: () => new Date(Date.now() + 31 * 86_400_000) }, trashDays: 30 });

describe('submissions, what works: listing and filtering', () => {
  it('lists newest first with cursor pages that cover every row once', async () => {
    const { form, call, submit } = await ownerWithForm();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++)
      ids.push(
        (
          await submit({
            payload: { n: String(i) },
            receivedAt: at(`2026-03-0${1 + Math.floor(i / 2)}T10:00:00.000Z`),
          })
        ).id,
      );
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: Awaited<ReturnType<typeof call>> = await call(
        'GET',
        `/v1/forms/${form.id}/submissions?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((s: { id: string }) => s.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
    const first = (await call('GET', `/v1/forms/${form.id}/submissions?limit=1`)).body.data[0];
    expect(first).toEqual({
      id: ids[6],
      form_id: form.id,
      status: 'received',
      received_at: '2026-03-04T10:00:00.000Z',
      payload: { n: '6' },
      files: 0,
      spam_reason: null,
      spam_score: null,
      spam_reasons: [],
      read: false,
      purged_at: null,
    });
  });

  it('filters by status, time range and a search over payload values', async () => {
    const { form, call, submit } = await ownerWithForm();
    const seed = (status: 'received' | 'spam', when: string, payload: Record<string, string>) =>
      submit({
        status,
        payload,
        receivedAt: at(when),
      });
    const a = await seed('received', '2026-01-10T00:00:00.000Z', { email: 'Ada@Example.com', msg: 'hello' });
    const b = await seed('spam', '2026-01-20T00:00:00.000Z', { email: 'bot@spam.test', msg: '100% free_money' });
    const c = await seed('received', '2026-02-01T00:00:00.000Z', { email: 'grace@example.com', msg: 'hi' });
    const ids = async (query: string) =>
      (await call('GET', `/v1/forms/${form.id}/submissions?${query}`)).body.data.map((s: { id: string }) => s.id);
    expect(await ids('status=spam')).toEqual([b.id]);
    expect(await ids('status=received')).toEqual([c.id, a.id]);
    expect(await ids('since=2026-01-20T00:00:00.000Z')).toEqual([c.id, b.id]);
    expect(await ids('until=2026-01-20T00:00:00.000Z')).toEqual([a.id]);
    expect(await ids('since=2026-01-01T00:00:00Z&until=2026-02-01T00:00:00Z&status=received')).toEqual([a.id]);
    expect(await ids('q=example.COM')).toEqual([c.id, a.id]);
    expect(await ids(`q=${encodeURIComponent('100%')}`)).toEqual([b.id]);
    expect(await ids(`q=${encodeURIComponent('%')}`)).toEqual([b.id]);
    expect(await ids('q=e_mail')).toEqual([]);
  });
});

describe('submissions, what works: reading and deleting', () => {
  it('gets one with its files and signed links that download without a key', async () => {
    const { call, submit } = await ownerWithForm();
    const s = await submit({
      payload: { name: 'Ada' },
      files: [
        { field: 'cv', filename: 'lebenslauf für ada.pdf', contentType: 'application/pdf', content: '%PDF-1.4 tiny' },
      ],
    });
    const res = await call('GET', `/v1/submissions/${s.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: s.id, payload: { name: 'Ada' }, files: 1 });
    const [file] = res.body.attachments;
    expect(file).toMatchObject({
      id: s.files[0]?.id,
      field: 'cv',
      filename: 'lebenslauf für ada.pdf',
      content_type: 'application/pdf',
      size: 13,
    });
    expect(Date.parse(file.expires_at)).toBeGreaterThan(Date.now());
    const link = file.url.replace(ctx.platform.config.PUBLIC_BASE_URL, ctx.url);
    const download = await fetch(link);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(download.headers.get('content-disposition')).toContain("filename*=UTF-8''lebenslauf%20f%C3%BCr%20ada.pdf");
    expect(await download.text()).toBe('%PDF-1.4 tiny');
  });

  it('deletes one to the trash, and with its stored files for good once the trash’s time is up', async () => {
    const { call, submit } = await ownerWithForm();
    const s = await submit({
      files: [{ field: 'f', filename: 'a.txt', contentType: 'text/plain', content: 'x' }],
    });
    expect((await call('DELETE', `/v1/submissions/${s.id}`)).status).toBe(204);
    expect((await call('GET', `/v1/submissions/${s.id}`)).status).toBe(404);
    expect(await ctx.platform.blobs.get(s.files[0]?.storage_key as string)).toBeDefined();
    await emptyTrash();
    await expect(ctx.platform.blobs.get(s.files[0]?.storage_key as string)).rejects.toThrow();
    expect(await ctx.platform.db('submission_files').where({ submission_id: s.id }).first()).toBeUndefined();
  });

  it('deleting one for good also removes its webhook deliveries and its idempotency key (no copy of its data stays)', async () => {
    const { account, form, call, submit } = await ownerWithForm();
    const s = await submit({
      payload: { email: 'gone@person.test' },
    });
    const other = await submit();
    const { id: webhookId } = await factories.webhook(ctx.platform, { accountId: account.id, formId: form.id });
    for (const submissionId of [s.id, other.id])
      await factories.delivery(ctx.platform.db, {
        accountId: account.id,
        webhookId,
        formId: form.id,
        submissionId,
        data: { payload: { email: 'gone@person.test' } },
      });
    await ctx.platform.db('idempotency_keys').insert([
      { form_id: form.id, key: 'k-deleted', submission_id: s.id, expires_at: new Date(Date.now() + 60_000) },
      { form_id: form.id, key: 'k-kept', submission_id: other.id, expires_at: new Date(Date.now() + 60_000) },
    ]);
    expect((await call('DELETE', `/v1/submissions/${s.id}`)).status).toBe(204);
    await emptyTrash();
    expect(await ctx.platform.db('deliveries').where({ webhook_id: webhookId }).pluck('submission_id')).toEqual([
      other.id,
    ]);
    expect(await ctx.platform.db('idempotency_keys').where({ form_id: form.id }).pluck('key')).toEqual(['k-kept']);
  });
});

describe('submissions, what works: relabelling', () => {
  it('marking spam as received counts it in its month and enqueues submission.created in the same transaction', async () => {
    const { account, form, call, submit } = await ownerWithForm();
    const receivedAt = at('2026-04-15T12:00:00.000Z');
    const s = await submit({
      status: 'spam',
      payload: { email: 'real@person.test' },
      receivedAt,
    });
    const res = await call('PATCH', `/v1/submissions/${s.id}`, { status: 'received' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'received', spam_reason: null });
    const usage = await ctx.platform.db('usage_counters').where({ account_id: account.id }).select('period', 'used');
    expect(
      usage.map((u: { period: Date; used: number }) => [
        periodKey(new Date(u.period.getTime() - u.period.getTimezoneOffset() * 60000)),
        u.used,
      ]),
    ).toEqual([['2026-04-01', 1]]);
    // Stored as ingest stores it, the spam post has its submission.spam event; marking it received adds submission.created.
    const events = await ctx.platform
      .db('outbox')
      .whereRaw("payload->>'submission_id' = ?", [s.id])
      .andWhere({ subject: 'submission.created' })
      .select('subject', 'payload');
    expect(events).toHaveLength(1);
    expect(events[0].subject).toBe('submission.created');
    expect(Value.Check(SubmissionEvent, events[0].payload)).toBe(true);
    expect(events[0].payload).toMatchObject({
      submission_id: s.id,
      form_id: form.id,
      account_id: account.id,
      status: 'received',
      received_at: '2026-04-15T12:00:00.000Z',
      payload: { email: 'real@person.test' },
      files: [],
      form_name: 'Test form',
    });
    // idempotent: asking again changes nothing
    await call('PATCH', `/v1/submissions/${s.id}`, { status: 'received' });
    expect(
      await ctx.platform
        .db('outbox')
        .whereRaw("payload->>'submission_id' = ?", [s.id])
        .andWhere({ subject: 'submission.created' })
        .count('* as n')
        .first(),
    ).toEqual({ n: 1 });
  });

  it('marking a received submission as spam relabels it; moving it back neither counts nor fires again', async () => {
    const { account, form, call, submit } = await ownerWithForm();
    const s = await submit({
      status: 'received',
    });
    // Stored as ingest stores it: counted once, its submission.created event enqueued once.
    const countedAndFired = async () => [
      (await ctx.platform.db('usage_counters').where({ account_id: account.id }).first())?.used,
      await ctx.platform.db('outbox').whereRaw("payload->>'submission_id' = ?", [s.id]).pluck('subject'),
    ];
    expect(await countedAndFired()).toEqual([1, ['submission.created']]);
    const spam = await call('PATCH', `/v1/submissions/${s.id}`, { status: 'spam' });
    expect(spam.body).toMatchObject({ status: 'spam', spam_reason: 'marked-by-owner' });
    expect(
      (await call('GET', `/v1/forms/${form.id}/submissions?status=spam`)).body.data.map((x: { id: string }) => x.id),
    ).toEqual([s.id]);
    const back = await call('PATCH', `/v1/submissions/${s.id}`, { status: 'received' });
    expect(back.body.status).toBe('received');
    expect(await countedAndFired()).toEqual([1, ['submission.created']]);
  });
});

describe('submissions, what errors', () => {
  it('422 for a bad limit, time, status or cursor', async () => {
    const { form, call } = await ownerWithForm();
    const res = await call('GET', `/v1/forms/${form.id}/submissions?limit=0&since=yesterday&status=deleted`);
    expect(res.status).toBe(422);
    expect([...new Set(res.body.errors.map((e: { field: string }) => e.field))].sort()).toEqual([
      'query/limit',
      'query/since',
      'query/status',
    ]);
    for (const cursor of ['garbage', Buffer.from('[1,2]').toString('base64url')]) {
      const bad = await call('GET', `/v1/forms/${form.id}/submissions?cursor=${cursor}`);
      expect(bad.status).toBe(422);
      expect(bad.body.errors).toEqual([{ field: 'query/cursor', message: 'is not a valid cursor' }]);
    }
    const patch = await call('PATCH', `/v1/submissions/${newId('submission')}`, { status: 'deleted' });
    expect(patch.status).toBe(422);
    expect(new Set(patch.body.errors.map((e: { field: string }) => e.field))).toEqual(new Set(['body/status']));
  });

  it('404 for unknown forms and submissions; an expired link answers 410 and a forged one 404', async () => {
    const { call, submit } = await ownerWithForm();
    expect((await call('GET', '/v1/forms/frm_nope/submissions')).status).toBe(404);
    for (const method of ['GET', 'DELETE']) expect((await call(method, '/v1/submissions/sub_nope')).status).toBe(404);
    expect((await call('PATCH', '/v1/submissions/sub_nope', { status: 'spam' })).status).toBe(404);
    const s = await submit({
      files: [{ field: 'f', filename: 'a.txt', contentType: 'text/plain', content: 'x' }],
    });
    const fileId = s.files[0]?.id as string;
    const files = api(ctx.url);
    const expired = fileDownloadUrl({
      config: { PUBLIC_BASE_URL: '' },
      secrets: ctx.platform.secrets,
      fileId,
      now: new Date(Date.now() - 3600_000),
      ttlSeconds: 60,
    });
    const gone = await files('GET', expired);
    expect([gone.status, gone.body.type.split('/').pop()]).toEqual([410, 'link-expired']);
    const valid = fileDownloadUrl({
      config: { PUBLIC_BASE_URL: '' },
      secrets: ctx.platform.secrets,
      fileId,
      now: new Date(),
    });
    // One character of the signature changed (to another one: a fixed 'A' was flaky when the signature began with A).
    const forged = valid.replace(/signature=(.)/, (_, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`);
    expect(forged).not.toBe(valid);
    expect((await files('GET', forged)).status).toBe(404);
    expect((await files('GET', valid.replace(/expires=\d+/, 'expires=99999999999'))).status).toBe(404);
    expect((await files('GET', `/v1/files/${fileId}`)).status).toBe(404);
    expect((await fetch(`${ctx.url}${valid}`)).status).toBe(200);
  });
});

describe('submissions, what must be refused', () => {
  it('401 / 403 for missing, revoked and submission keys on every submission route', async () => {
    const { account, form, submit } = await ownerWithForm();
    const s = await submit();
    const revoked = await factories.apiKey(ctx.platform.db, account.id, 'management', { revoked: true });
    const sub = await factories.apiKey(ctx.platform.db, account.id, 'submission');
    for (const [method, path, body] of everySubmissionRoute(form.id, s.id, 'spam')) {
      expect([method, path, (await api(ctx.url)(method, path, body)).status]).toEqual([method, path, 401]);
      expect([method, path, (await api(ctx.url, revoked)(method, path, body)).body.type.split('/').pop()]).toEqual([
        method,
        path,
        'invalid-key',
      ]);
      expect([method, path, (await api(ctx.url, sub)(method, path, body)).body.type.split('/').pop()]).toEqual([
        method,
        path,
        'insufficient-scope',
      ]);
    }
    expect((await api(ctx.url, account.managementKey)('GET', `/v1/submissions/${s.id}`)).body.status).toBe('received');
  });

  it('404 when another account lists, exports, reads, relabels or deletes, and nothing changes', async () => {
    const { form, call, submit } = await ownerWithForm();
    const s = await submit({
      status: 'spam',
      payload: { secret: 'owner-only' },
    });
    const intruder = api(ctx.url, (await factories.account(ctx.platform.db)).managementKey);
    for (const [method, path, body] of everySubmissionRoute(form.id, s.id, 'received')) {
      const res = await intruder(method, path, body);
      expect([method, path, res.status]).toEqual([method, path, 404]);
      expect(res.text).not.toContain('owner-only');
    }
    expect((await call('GET', `/v1/submissions/${s.id}`)).body).toMatchObject({
      status: 'spam',
      payload: { secret: 'owner-only' },
    });
    expect(
      await ctx.platform
        .db('outbox')
        .whereRaw("payload->>'submission_id' = ?", [s.id])
        .andWhere({ subject: 'submission.created' })
        .first(),
    ).toBeUndefined();
  });
});

import { newId, periodKey } from '@intake/shared';
import { eventually } from '@intake/shared/testing';
import { storeSubmission, type Accepted } from '../src/domain/store';
import { findFormBySlug, type IngestForm } from '../src/repositories/ingest.repository';
import { accountWithForm, publishedEvents, startIngest, submissionsOf, type IngestHarness } from './helpers';

/** How a post is stored: in one transaction with its quota unit (grouped with the posts that arrive meanwhile), the form cache, the relay's wake-up. */
describe('POST /v1/f/:slug — storing', () => {
  let h: IngestHarness;
  beforeAll(async () => {
    // A relay that would poll only once a minute: anything published sooner was woken by ingest itself.
    h = await startIngest({}, { relay: true, relayPollMs: 60_000 });
  });
  afterAll(() => h.close());

  // The relay deletes an event's outbox row in the transaction that publishes it.
  const unpublished = async (formId: string) => h.platform.db('outbox').whereRaw("payload->>'form_id' = ?", [formId]);

  it('refuses a form paused after ingest read it once its cached copy expires (about a second)', async () => {
    const { form, post } = await accountWithForm(h);
    expect((await post({ n: '1' })).status).toBe(201);
    await h.platform.db('forms').where({ id: form.id }).update({ status: 'paused' });
    const refused = await eventually(async () => ((await post({ n: 'again' })).status === 403 ? true : undefined), { timeoutMs: 5000, intervalMs: 200 });
    expect(refused).toBe(true);
  });

  it('publishes a stored submission’s event at once: ingest wakes its relay after commit (no NOTIFY, no poll needed)', async () => {
    const { form, post } = await accountWithForm(h);
    expect((await post({ n: '1' })).status).toBe(201);
    // The first may have been taken by the relay's start-up drain; the second can only be published by the wake-up.
    await eventually(async () => (await unpublished(form.id)).length === 0, { timeoutMs: 5000 });
    expect((await post({ n: '2' })).status).toBe(201);
    await eventually(async () => (await unpublished(form.id)).length === 0, { timeoutMs: 5000, message: 'the second event was not published' });
    const published = (await publishedEvents(h, 'submission.created')).filter((e) => e.event.form_id === form.id);
    expect(published.map((e) => (e.event.payload as { n: string }).n).sort()).toEqual(['1', '2']);
  });
});

/** The same, with forms cached for a minute: these paths only run while ingest still uses the form it read. */
describe('POST /v1/f/:slug — storing with a cached form', () => {
  let h: IngestHarness;
  beforeAll(async () => {
    h = await startIngest({ FORM_CACHE_MS: 60_000 });
  });
  afterAll(() => h.close());

  const usedOf = async (accountId: string) => (await h.platform.db('usage_counters').where({ account_id: accountId }).first())?.used;

  it('counts nothing for a post whose form was deleted after ingest read it: 404, the earlier post counted once', async () => {
    const { account, form, post } = await accountWithForm(h, { quota: 10 });
    expect((await post({ n: '1' })).status).toBe(201);
    await h.platform.db('forms').where({ id: form.id }).delete();
    const res = await post({ n: '2' });
    expect([res.status, res.body.type?.split('/').pop()]).toEqual([404, 'form-not-found']);
    expect(await usedOf(account.id)).toBe(1);
    expect(await h.platform.db('outbox').whereRaw("payload->>'form_id' = ?", [form.id])).toHaveLength(1);
  });

  /** Calls the store directly, as ingest does once a post passed every check. */
  const storer = async (form: { slug: string }) => {
    const now = h.platform.clock.now();
    const period = periodKey(now);
    const ingestForm = (await findFormBySlug(h.platform.db, form.slug, period)) as IngestForm;
    return (props: { id?: string; files?: Accepted['files']; idempotencyKey?: string; spam?: string } = {}) =>
      storeSubmission({ platform: h.platform, accepted: { form: ingestForm, period, now, submissionId: props.id ?? newId('submission'), spam: props.spam, payload: { n: '1' }, files: props.files ?? [], idempotencyKey: props.idempotencyKey, ip: '127.0.0.1', userAgent: undefined, referrer: undefined } });
  };
  /** The transactions the form's submissions were written in (rows written by one transaction share its xmin). */
  const transactionsOf = async (formId: string) => new Set((await h.platform.db('submissions').where({ form_id: formId }).select(h.platform.db.raw('xmin::text as tx'))).map((r: { tx: string }) => r.tx)).size;

  it('counts exactly when a write fails: the count is in the write’s transaction, so a refused write counted nothing', async () => {
    const { account, form } = await accountWithForm(h, { quota: 10 });
    const store = await storer(form);
    const id = newId('submission');
    expect(await store({ id })).toBe('stored');
    // The same id again: the insert violates the primary key, and the count rolls back with it.
    await expect(store({ id })).rejects.toMatchObject({ code: '23505' });
    expect(await usedOf(account.id)).toBe(1);
    // A NUL in a file's name cannot become text in Postgres: refused, nothing counted.
    const file = { id: newId('file'), field: 'f', filename: 'a\u0000b', content_type: 'text/plain', size: 1, storage_key: 'k' };
    await expect(store({ files: [file] })).rejects.toMatchObject({ code: '22P05' });
    expect(await usedOf(account.id)).toBe(1);
    expect(await submissionsOf(h, form.id)).toHaveLength(1);
  });

  it('stores posts that arrive while earlier ones are being written together, in one transaction, each with its event', async () => {
    const { account, form } = await accountWithForm(h, { quota: 100 });
    const store = await storer(form);
    // Two go out at once (two writes may be in flight); the other eight wait for them and go together.
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => store()));
    expect(outcomes).toEqual(Array(10).fill('stored'));
    expect(await submissionsOf(h, form.id)).toHaveLength(10);
    expect(await transactionsOf(form.id)).toBe(3);
    expect(await usedOf(account.id)).toBe(10);
    expect(await h.platform.db('outbox').whereRaw("payload->>'form_id' = ?", [form.id])).toHaveLength(10);
  });

  it('stores a group that fails as a whole post by post: a deleted form’s posts get 404, the others are stored and counted', async () => {
    const kept = await accountWithForm(h, { quota: 100 });
    const gone = await accountWithForm(h, { quota: 100 });
    const [storeKept, storeGone] = [await storer(kept.form), await storer(gone.form)];
    await h.platform.db('forms').where({ id: gone.form.id }).delete();
    const settled = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? storeGone() : storeKept())));
    const answers = settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as { slug?: string }).slug));
    expect(answers).toEqual(Array.from({ length: 10 }, (_, i) => (i % 2 ? 'form-not-found' : 'stored')));
    expect(await submissionsOf(h, kept.form.id)).toHaveLength(5);
    expect(await usedOf(kept.account.id)).toBe(5);
    expect(await usedOf(gone.account.id)).toBeUndefined();
  });

  it('stops exactly at the quota inside a group: a group the quota cannot take is stored post by post', async () => {
    const { account, form } = await accountWithForm(h, { quota: 4 });
    const store = await storer(form);
    const settled = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => store({ spam: i === 9 ? 'honeypot' : undefined })));
    const answers = settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as { slug?: string }).slug));
    // Spam is never counted, so it is stored whatever the quota.
    expect(answers.filter((a) => a === 'stored')).toHaveLength(5);
    expect(answers.filter((a) => a === 'quota-exceeded')).toHaveLength(5);
    expect(answers[9]).toBe('stored');
    expect(await usedOf(account.id)).toBe(4);
    const rows = await submissionsOf(h, form.id);
    expect(rows.map((r: { status: string }) => r.status).sort()).toEqual(['received', 'received', 'received', 'received', 'spam']);
  });

  it('claims one Idempotency-Key once inside a group: one post is stored, the others lost the claim', async () => {
    const { account, form } = await accountWithForm(h, { quota: 100 });
    const store = await storer(form);
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => store({ idempotencyKey: 'same-key' })));
    expect(outcomes.filter((o) => o === 'stored')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'lost-idempotency-race')).toHaveLength(5);
    expect(await submissionsOf(h, form.id)).toHaveLength(1);
    expect(await usedOf(account.id)).toBe(1);
  });

  it('refuses over-quota posts early again once the exact check found the quota used up, and stores nothing for them', async () => {
    const { account, form, post } = await accountWithForm(h, { quota: 1 });
    // Both pass the early check (usage 0 when read); the exact check when storing lets one through.
    const answers = await Promise.all([post({ n: '1' }), post({ n: '2' })]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 402]);
    // Refused before the body is read: an unparseable body gets 402, not 400 bad-body.
    const late = await post('{not json', { 'content-type': 'application/json' });
    expect([late.status, late.body.limit]).toEqual([402, 1]);
    expect(await submissionsOf(h, form.id)).toHaveLength(1);
    expect(await usedOf(account.id)).toBe(1);
  });
});

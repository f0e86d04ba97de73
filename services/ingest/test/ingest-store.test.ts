import { newId, periodKey } from '@intake/shared';
import { eventually } from '@intake/shared/testing';
import { storeSubmission, type Accepted } from '../src/domain/store';
import { findFormBySlug, type IngestForm } from '../src/repositories/ingest.repository';
import { accountWithForm, publishedEvents, startIngest, submissionsOf, type IngestHarness } from './helpers';

/** How a post is stored: the quota unit counted before the submission's transaction, the form cache, the relay's wake-up. */
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

  it('gives the quota unit back when the submission cannot be stored (the form was deleted after ingest read it): 404, counted once', async () => {
    const { account, form, post } = await accountWithForm(h, { quota: 10 });
    expect((await post({ n: '1' })).status).toBe(201);
    await h.platform.db('forms').where({ id: form.id }).delete();
    const res = await post({ n: '2' });
    expect([res.status, res.body.type?.split('/').pop()]).toEqual([404, 'form-not-found']);
    expect(await usedOf(account.id)).toBe(1);
    expect(await h.platform.db('outbox').whereRaw("payload->>'form_id' = ?", [form.id])).toHaveLength(1);
  });

  it('counts exactly when a write fails: an error after the count gives the unit back, one before it (bad parameters) counted nothing', async () => {
    const { account, form } = await accountWithForm(h, { quota: 10 });
    const now = h.platform.clock.now();
    const period = periodKey(now);
    const ingestForm = (await findFormBySlug(h.platform.db, form.slug, period)) as IngestForm;
    const accepted = (submissionId: string, files: Accepted['files'] = []): Accepted => ({ form: ingestForm, period, now, submissionId, spam: undefined, payload: { n: '1' }, files, idempotencyKey: undefined, ip: '127.0.0.1', userAgent: undefined, referrer: undefined });
    const id = newId('submission');
    expect(await storeSubmission({ platform: h.platform, accepted: accepted(id) })).toBe('stored');
    // The same id again: the count commits, then the insert violates the primary key.
    await expect(storeSubmission({ platform: h.platform, accepted: accepted(id) })).rejects.toMatchObject({ code: '23505' });
    expect(await usedOf(account.id)).toBe(1);
    // A NUL in a file's name cannot become jsonb: Postgres refuses the call's parameters before anything runs.
    const file = { id: newId('file'), field: 'f', filename: 'a\u0000b', content_type: 'text/plain', size: 1, storage_key: 'k' };
    await expect(storeSubmission({ platform: h.platform, accepted: accepted(newId('submission'), [file]) })).rejects.toMatchObject({ code: '22P05' });
    expect(await usedOf(account.id)).toBe(1);
    expect(await submissionsOf(h, form.id)).toHaveLength(1);
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

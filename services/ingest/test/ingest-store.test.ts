import { newId, periodKey } from '@intake/shared/contracts';
import { type StoredUpload } from '@intake/shared/submissions';
import { eventually, useStarted } from '@intake/shared/testing';
import { findFormBySlug, type IngestForm } from '../src/read/form.repository';
import {
  accountWithForm,
  publishedEvent,
  publishedEvents,
  slugOf,
  startIngest,
  submissionsOf,
  type IngestHarness,
} from './helpers';

/**
 * How a post is stored: in one transaction with its quota unit (grouped with the posts that arrive meanwhile), the
 * form cache, the relay's wake-up.
 */
describe('POST /v1/f/:slug — storing', () => {
  // A relay that would poll only once a minute: anything published sooner was woken by ingest itself.
  const h = useStarted(() => startIngest({}, { relay: true, relayPollMs: 60_000 }));

  // The relay deletes an event's outbox row in the transaction that publishes it.
  const unpublished = async (formId: string) => h.platform.db('outbox').whereRaw("payload->>'form_id' = ?", [formId]);

  it('refuses a form paused after ingest read it once its cached copy expires (about a second)', async () => {
    const { form, post } = await accountWithForm(h);
    expect((await post({ n: '1' })).status).toBe(201);
    await h.platform.db('forms').where({ id: form.id }).update({ status: 'paused' });
    const refused = await eventually(async () => ((await post({ n: 'again' })).status === 403 ? true : undefined), {
      timeoutMs: 5000,
      intervalMs: 200,
    });
    expect(refused).toBe(true);
  });

  it('publishes a stored submission’s event at once: ingest wakes its relay after commit (no NOTIFY, no poll needed)', async () => {
    const { form, post } = await accountWithForm(h);
    expect((await post({ n: '1' })).status).toBe(201);
    // The first may have been taken by the relay's start-up drain; the second can only be published by the wake-up.
    await eventually(async () => (await unpublished(form.id)).length === 0, { timeoutMs: 5000 });
    expect((await post({ n: '2' })).status).toBe(201);
    await eventually(async () => (await unpublished(form.id)).length === 0, {
      timeoutMs: 5000,
      message: 'the second event was not published',
    });
    const published = (await publishedEvents(h, 'submission.created')).filter((e) => e.event.form_id === form.id);
    expect(published.map((e) => (e.event.payload as { n: string }).n).sort()).toEqual(['1', '2']);
  });
});

describe('POST /v1/f/:slug — storing a large post', () => {
  const h = useStarted(() => startIngest({}, { relay: true }));

  it('sends the event of a post too large for NATS without its fields (the submission keeps them); the relay goes on', async () => {
    const { form, post } = await accountWithForm(h);
    const essay = 'ä'.repeat(200 * 1024); // 400 KiB of UTF-8: more than an event carries (256 KiB)
    const large = await post({ name: 'Ada', essay });
    expect(large.status).toBe(201);
    const [stored] = await submissionsOf(h, form.id);
    expect(stored.payload).toEqual({ name: 'Ada', essay });
    const event = (await publishedEvent(h, 'submission.created', large.body.id as string)).event;
    expect([event.payload, event.payload_omitted]).toEqual([{}, true]);
    const small = await post({ name: 'Grace' });
    const next = (await publishedEvent(h, 'submission.created', small.body.id as string)).event;
    expect([next.payload, next.payload_omitted]).toEqual([{ name: 'Grace' }, undefined]);
  });
});

/** Calls the store directly, as ingest does once a post passed every check. */
async function storerOf(h: IngestHarness, form: { slug: string }) {
  const now = h.platform.clock.now();
  const period = periodKey(now);
  const ingestForm = (await findFormBySlug(h.platform.db, form.slug, period)) as IngestForm;
  return (
    props: {
      id?: string;
      files?: StoredUpload[];
      idempotencyKey?: string;
      spam?: string;
      payload?: Record<string, string>;
    } = {},
  ) =>
    h.deps.writer.store({
      form: ingestForm,
      receivedAt: now,
      submissionId: props.id ?? newId('submission'),
      spam: props.spam,
      payload: props.payload ?? { n: '1' },
      files: props.files ?? [],
      idempotency:
        props.idempotencyKey === undefined
          ? undefined
          : { key: props.idempotencyKey, expiresAt: new Date(now.getTime() + 86_400_000) },
      ip: '127.0.0.1',
      userAgent: undefined,
      referrer: undefined,
    });
}

/** A file whose name Postgres refuses (a NUL cannot become text): its post fails with 22P05. */
const nulNamedFile = (): StoredUpload => ({
  id: newId('file'),
  field: 'f',
  filename: 'a\u0000b',
  content_type: 'text/plain',
  size: 1,
  storage_key: 'k',
});

/** Each promise's value, or the slug or code it failed with. */
const settled = (promises: Promise<unknown>[]) =>
  promises.map((p) => p.catch((err: { slug?: string; code?: string }) => err.slug ?? err.code));

/** Ingest with forms cached for a minute, and the ways its tests call and inspect the store. */
function useCachedFormIngest() {
  const h = useStarted(() => startIngest({ FORM_CACHE_MS: 60_000 }));

  const usedOf = async (accountId: string) =>
    (await h.platform.db('usage_counters').where({ account_id: accountId }).first())?.used;

  const storer = (form: { slug: string }) => storerOf(h, form);
  /** The transactions the form's submissions were written in (rows written by one transaction share its xmin). */
  const transactionsOf = async (formId: string) =>
    new Set(
      (await h.platform.db('submissions').where({ form_id: formId }).select(h.platform.db.raw('xmin::text as tx'))).map(
        (r: { tx: string }) => r.tx,
      ),
    ).size;
  /**
   * Runs `posts` while both of the process's write slots are taken by a post each to another
   * form: the posts wait, then go out together as one group (unless it is too large).
   */
  const asOneGroup = async <T>(posts: () => Promise<T>[]): Promise<T[]> => {
    const { form: other } = await accountWithForm(h, { quota: 100 });
    const storeOther = await storer(other);
    const busy = [storeOther(), storeOther()];
    const answers = posts();
    await Promise.all(busy);
    return Promise.all(answers);
  };
  return { h, usedOf, storer, transactionsOf, asOneGroup };
}

type CachedFormIngest = ReturnType<typeof useCachedFormIngest>;

/** A post refused after ingest read its form, or by Postgres, counts nothing. */
function countingCases({ h, usedOf, storer }: CachedFormIngest) {
  it('counts nothing for a post whose form was deleted after ingest read it: 404, the earlier post counted once', async () => {
    const { account, form, post } = await accountWithForm(h, { quota: 10 });
    expect((await post({ n: '1' })).status).toBe(201);
    await h.platform.db('forms').where({ id: form.id }).delete();
    const res = await post({ n: '2' });
    expect([res.status, res.body.type?.split('/').pop()]).toEqual([404, 'form-not-found']);
    expect(await usedOf(account.id)).toBe(1);
    expect(await h.platform.db('outbox').whereRaw("payload->>'form_id' = ?", [form.id])).toHaveLength(1);
  });

  it('counts exactly when a write fails: the count is in the write’s transaction, so a refused write counted nothing', async () => {
    const { account, form } = await accountWithForm(h, { quota: 10 });
    const store = await storer(form);
    const id = newId('submission');
    expect(await store({ id })).toBe('stored');
    // The same id again: the insert violates the primary key, and the count rolls back with it.
    await expect(store({ id })).rejects.toMatchObject({ code: '23505' });
    expect(await usedOf(account.id)).toBe(1);
    // A NUL in a file's name cannot become text in Postgres: refused, nothing counted.
    await expect(store({ files: [nulNamedFile()] })).rejects.toMatchObject({ code: '22P05' });
    expect(await usedOf(account.id)).toBe(1);
    expect(await submissionsOf(h, form.id)).toHaveLength(1);
  });
}

/** Posts that arrive while others are written go out together, one transaction for the group. */
function groupingCases({ h, usedOf, storer, transactionsOf, asOneGroup }: CachedFormIngest) {
  it('stores the posts that arrive while earlier ones are being written together, in one transaction, each with its event', async () => {
    const { account, form } = await accountWithForm(h, { quota: 100 });
    const store = await storer(form);
    expect(await asOneGroup(() => Array.from({ length: 10 }, () => store()))).toEqual(Array(10).fill('stored'));
    expect(await submissionsOf(h, form.id)).toHaveLength(10);
    expect(await transactionsOf(form.id)).toBe(1);
    expect(await usedOf(account.id)).toBe(10);
    expect(await h.platform.db('outbox').whereRaw("payload->>'form_id' = ?", [form.id])).toHaveLength(10);
  });

  it('answers a deleted form’s posts in a group with 404 and stores the others of the group, counted, in its transaction', async () => {
    const kept = await accountWithForm(h, { quota: 100 });
    const gone = await accountWithForm(h, { quota: 100 });
    const [storeKept, storeGone] = [await storer(kept.form), await storer(gone.form)];
    await h.platform.db('forms').where({ id: gone.form.id }).delete();
    const answers = await asOneGroup(() =>
      settled(Array.from({ length: 10 }, (_, i) => (i % 2 ? storeGone() : storeKept()))),
    );
    expect(answers).toEqual(Array.from({ length: 10 }, (_, i) => (i % 2 ? 'form-not-found' : 'stored')));
    expect(await submissionsOf(h, kept.form.id)).toHaveLength(5);
    expect(await transactionsOf(kept.form.id)).toBe(1);
    expect(await usedOf(kept.account.id)).toBe(5);
    expect(await usedOf(gone.account.id)).toBeUndefined();
  });

  it('stops exactly at the quota in a group: the posts it can take are stored in order, the rest get 402, spam uncounted', async () => {
    const { account, form } = await accountWithForm(h, { quota: 4 });
    const store = await storer(form);
    const answers = await asOneGroup(() =>
      settled(Array.from({ length: 10 }, (_, i) => store({ spam: i === 5 ? 'honeypot' : undefined }))),
    );
    expect(answers).toEqual([
      'stored',
      'stored',
      'stored',
      'stored',
      'quota-exceeded',
      'stored',
      'quota-exceeded',
      'quota-exceeded',
      'quota-exceeded',
      'quota-exceeded',
    ]);
    expect(await usedOf(account.id)).toBe(4);
    const rows = await submissionsOf(h, form.id);
    expect(rows.map((r: { status: string }) => r.status).sort()).toEqual([
      'received',
      'received',
      'received',
      'received',
      'spam',
    ]);
    expect(await transactionsOf(form.id)).toBe(1);
  });
}

/** Idempotency keys, a post Postgres refuses and the size limit of a group. */
function groupEdgeCases({ h, usedOf, storer, transactionsOf, asOneGroup }: CachedFormIngest) {
  it('leaves no Idempotency-Key claimed for a post the quota refused in a group: a retry is stored once units are back', async () => {
    const { account, form } = await accountWithForm(h, { quota: 1 });
    const store = await storer(form);
    const answers = await asOneGroup(() => settled([store({ idempotencyKey: 'k0' }), store({ idempotencyKey: 'k1' })]));
    expect(answers).toEqual(['stored', 'quota-exceeded']);
    expect(
      (await h.platform.db('idempotency_keys').where({ form_id: form.id })).map((k: { key: string }) => k.key),
    ).toEqual(['k0']);
    await h.platform.db('accounts').where({ id: account.id }).update({ quota_override: 2 });
    expect(await (await storer(form))({ idempotencyKey: 'k1' })).toBe('stored');
  });

  it('claims one Idempotency-Key once inside a group: one post is stored, the others lost the claim', async () => {
    const { account, form } = await accountWithForm(h, { quota: 100 });
    const store = await storer(form);
    const outcomes = await asOneGroup(() => Array.from({ length: 6 }, () => store({ idempotencyKey: 'same-key' })));
    expect(outcomes).toEqual(['stored', ...Array(5).fill('lost-idempotency-race')]);
    expect(await submissionsOf(h, form.id)).toHaveLength(1);
    expect(await usedOf(account.id)).toBe(1);
  });

  it('stores a group Postgres refuses as a whole post by post: the bad post fails alone', async () => {
    const { account, form } = await accountWithForm(h, { quota: 100 });
    const store = await storer(form);
    const bad = nulNamedFile();
    const answers = await asOneGroup(() =>
      settled(Array.from({ length: 5 }, (_, i) => store({ files: i === 2 ? [bad] : [] }))),
    );
    expect(answers).toEqual(['stored', 'stored', '22P05', 'stored', 'stored']);
    expect(await transactionsOf(form.id)).toBe(4);
    expect(await usedOf(account.id)).toBe(4);
  });

  it('keeps a group under 4 MiB: large posts are stored in several transactions', async () => {
    const { form } = await accountWithForm(h, { quota: 100 });
    const store = await storer(form);
    const payload = { text: 'x'.repeat(1536 * 1024) };
    expect(await asOneGroup(() => Array.from({ length: 3 }, () => store({ payload })))).toEqual([
      'stored',
      'stored',
      'stored',
    ]);
    expect(await transactionsOf(form.id)).toBe(2);
  });
}

/** A form row locked too long, and the early quota check once the exact one found the quota used up. */
function lockAndEarlyRefusalCases({ h, usedOf }: CachedFormIngest) {
  it('answers 503 when a row its group needs stays locked for 5 s (a form being deleted); the posts after it go on', async () => {
    const locked = await accountWithForm(h, { quota: 100 });
    const other = await accountWithForm(h, { quota: 100 });
    // Both forms read and cached before the lock is taken.
    expect([(await locked.post({ n: '1' })).status, (await other.post({ n: '1' })).status]).toEqual([201, 201]);
    const deleting = await h.platform.db.transaction();
    try {
      await deleting('forms').where({ id: locked.form.id }).forUpdate().select('id');
      const started = Date.now();
      const stuck = locked.post({ n: 'stuck' });
      const waiting = async () =>
        (
          await h.platform.db.raw(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          )
        ).rows[0].n > 0;
      await eventually(waiting, { message: 'the stuck post waiting for the lock' });
      // The other write slot is free: a post to another form is stored meanwhile.
      expect((await other.post({ n: '2' })).status).toBe(201);
      const res = await stuck;
      expect([res.status, slugOf(res), res.headers.get('retry-after')]).toEqual([503, 'service-unavailable', '5']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(4500);
    } finally {
      await deleting.rollback();
    }
    expect(await submissionsOf(h, locked.form.id)).toHaveLength(1);
    expect(await usedOf(locked.account.id)).toBe(1);
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
}

/** The same, with forms cached for a minute: these paths only run while ingest still uses the form it read. */
describe('POST /v1/f/:slug — storing with a cached form', () => {
  const ingest = useCachedFormIngest();

  countingCases(ingest);
  groupingCases(ingest);
  groupEdgeCases(ingest);
  lockAndEarlyRefusalCases(ingest);
});

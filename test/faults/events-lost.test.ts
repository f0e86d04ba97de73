import { randomBytes } from 'node:crypto';
import { ensureStreams } from '@intake/shared/messaging';
import { eventually, listen } from '@intake/shared/testing';
import { faultSuite, formWithWebhook, pool, post, processEnv, startService, type Envelope } from './harness';

const MiB = 1_048_576;
const POSTS = 60;

/**
 * M1: a bounded events stream (NATS_EVENTS_MAX_BYTES, 1 MiB here) keeps dropping its oldest events when full
 * (`discard: old`), read or not. While the delivery service is down, posts fill it past its bound: the first events are
 * dropped before fan-out ever reads them, and their submissions, stored in Postgres, have no delivery for the
 * delivery reconciler to find. The submission reconciler (RECONCILE_AFTER, 2 s here) fans them out again from
 * Postgres once the delivery service is back: every post's webhook arrives, each exactly once.
 */
describe('fault: events dropped by a full, bounded events stream before fan-out read them', () => {
  const suite = faultSuite();

  it('are fanned out again from Postgres: every webhook arrives exactly once', async () => {
    const { platform, processes } = suite;
    const { nats, db } = platform;
    const envelopes: Envelope[] = [];
    const target = await listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        envelopes.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Envelope);
        res.end('ok');
      });
    });
    try {
      const form = await formWithWebhook(platform, target.url);
      const env = processEnv(platform.config, { RECONCILE_AFTER: '2s', NATS_EVENTS_MAX_BYTES: String(MiB) });
      await ensureStreams({ ...nats, streams: { eventsMaxBytes: MiB } });

      // The delivery service ran before (its reconciler's walk starts at its first pass), then is down.
      const first = await startService('delivery', env, { ready: true });
      processes.push(first);
      await eventually(async () => Boolean(await db('reconciler_cursors').where({ name: 'submissions' }).first()));
      await first.stop();

      const ingest = await startService('ingest', env);
      processes.push(ingest);
      // About 24 KiB each: 60 of them are 1.4 MiB of events, over the bound.
      const posts = await pool(POSTS, 4, (i) =>
        post(ingest.url, form.slug, { name: `full ${i}`, blob: randomBytes(12 * 1024).toString('hex') }),
      );
      expect(posts.filter((p) => p.status === 201)).toHaveLength(POSTS);
      await eventually(async () => Number((await db('outbox').count({ n: '*' }).first())?.n) === 0);
      const stream = await nats.jsm.streams.info(nats.names.eventsStream);
      const dropped = POSTS - stream.state.messages;
      expect(stream.config.max_bytes).toBe(MiB);
      expect(dropped).toBeGreaterThan(5);

      processes.push(await startService('delivery', env, { ready: true }));
      const ids = new Set(posts.map((p) => p.id));
      await eventually(
        async () => {
          const rows = await db('deliveries').where({ form_id: form.formId, status: 'succeeded' });
          return rows.length === POSTS;
        },
        { timeoutMs: 40_000, message: 'every delivery succeeded' },
      );
      const perSubmission = new Map<string, number>();
      for (const e of envelopes)
        perSubmission.set(e.data.submission_id, (perSubmission.get(e.data.submission_id) ?? 0) + 1);
      console.log(
        `events lost: ${dropped} of ${POSTS} events dropped unread by the full stream; ${envelopes.length} webhooks ` +
          `arrived for ${perSubmission.size} submissions`,
      );
      expect(new Set(perSubmission.keys())).toEqual(ids);
      expect([...perSubmission.values()].every((n) => n === 1)).toBe(true);
    } finally {
      await target.close();
    }
  });
});

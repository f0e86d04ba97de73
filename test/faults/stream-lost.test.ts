import { eventually, listen } from '@intake/shared/testing';
import { faultSuite, formWithWebhook, pool, post, processEnv, startService, type Envelope } from './harness';

/**
 * The deliveries stream is deleted while it holds the requests of deliveries not yet attempted (a stream lost with its
 * volume, purged by an operator, or a server restored from a backup older than them). The send consumer holds one
 * attempt (SEND_CONCURRENCY 1, its receiver not answering yet), so the other requests wait undelivered in the stream.
 * Once it is gone the consumer makes the stream and itself again, and the reconciler (RECONCILE_AFTER, 2 s here)
 * finds each delivery still waiting and has it asked for again: every delivery arrives, each exactly once.
 */
const POSTS = 30;

describe('fault: the deliveries stream is deleted under pending deliveries', () => {
  const suite = faultSuite();

  it('re-sends each lost request once, and every webhook arrives exactly once', async () => {
    const { platform, processes } = suite;
    const { nats } = platform;
    const envelopes: Envelope[] = [];
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const target = await listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        envelopes.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Envelope);
        void opened.then(() => res.end('ok'));
      });
    });
    try {
      const form = await formWithWebhook(platform, target.url);
      const env = processEnv(platform.config, {
        SEND_CONCURRENCY: '1',
        WEBHOOK_TIMEOUT_MS: '20000',
        RECONCILE_AFTER: '2s',
      });
      const ingest = await startService('ingest', env);
      processes.push(ingest, await startService('delivery', env, { ready: true }));

      const posts = await pool(POSTS, 8, (i) => post(ingest.url, form.slug, { name: 'lost', n: String(i) }));
      expect(posts.filter((p) => p.status === 201)).toHaveLength(POSTS);
      // Every delivery made; one attempt held by the receiver, the other requests waiting in the stream (at least one
      // each: RECONCILE_AFTER after a delivery was made, the reconciler asks for it again, so a slow start adds some).
      let deleted = 0;
      await eventually(async () => {
        const made = await platform.db('deliveries').where({ form_id: form.formId }).count<{ n: string }[]>('* as n');
        const info = await nats.jsm.consumers.info(nats.names.deliveriesStream, 'delivery-send');
        deleted = info.num_pending;
        return Number(made[0]?.n) === POSTS && envelopes.length === 1 && info.num_pending >= POSTS - 1;
      });
      await nats.jsm.streams.delete(nats.names.deliveriesStream);
      open();

      const ids = new Set(posts.map((p) => p.id));
      await eventually(
        async () => {
          const rows = await platform.db('deliveries').where({ form_id: form.formId, status: 'succeeded' });
          return rows.length === POSTS;
        },
        { timeoutMs: 40_000, message: 'every delivery succeeded' },
      );
      const perDelivery = new Map<string, number>();
      for (const e of envelopes) perDelivery.set(e.id, (perDelivery.get(e.id) ?? 0) + 1);
      const info = await nats.jsm.consumers.info(nats.names.deliveriesStream, 'delivery-send');
      console.log(
        `stream lost: ${deleted} requests deleted with the stream; ${envelopes.length} webhooks arrived, ` +
          `${perDelivery.size} distinct deliveries, ${[...perDelivery.values()].filter((n) => n > 1).length} twice; ` +
          `the stream and its consumer were made again (${info.delivered.stream_seq} requests since)`,
      );
      expect(new Set(envelopes.map((e) => e.data.submission_id))).toEqual(ids);
      expect(perDelivery.size).toBe(POSTS);
      expect([...perDelivery.values()].every((n) => n === 1)).toBe(true);
    } finally {
      open();
      await target.close();
    }
  });
});

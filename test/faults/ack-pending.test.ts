import { eventually, listen } from '@intake/shared/testing';
import { faultSuite, formWithWebhook, pool, post, processEnv, receiver, startService } from './harness';

/**
 * The ack-pending stall, with the limits scaled down by settings: the send consumer may hold 150 messages unsettled
 * (SEND_MAX_ACK_PENDING), and the ladder's second retry waits three minutes. Account A's receiver fails every attempt
 * of A's 400 posts; B posts beside them. Before the parking (migration 025), each of A's second failures stayed in
 * JetStream as a nak delayed three minutes: 150 of them and JetStream handed out nothing more, B's webhooks included,
 * for three minutes. Now a wait over a minute is parked in Postgres and its message acknowledged, and so is every
 * attempt a broken webhook (SendSlots, BREAK) is not making.
 */
const A_POSTS = 400;
const B_POSTS = 40;
const MAX_ACK_PENDING = 150;

describe('fault: account A fails every attempt past the consumer’s max_ack_pending', () => {
  const suite = faultSuite();

  it('parks A’s long waits in Postgres, and B’s webhooks keep coming, each once', async () => {
    const { platform, processes } = suite;
    const failing = await listen((_req, res) => {
      res.statusCode = 500;
      res.end();
    });
    const quick = await receiver();
    try {
      const a = await formWithWebhook(platform, failing.url);
      const b = await formWithWebhook(platform, quick.url);
      const env = processEnv(platform.config, {
        SEND_MAX_ACK_PENDING: String(MAX_ACK_PENDING),
        WEBHOOK_RETRY_SCHEDULE: '200ms,3m',
      });
      const ingest = await startService('ingest', env);
      processes.push(ingest, await startService('delivery', env, { ready: true }));

      const ofA = await pool(A_POSTS, 16, (i) => post(ingest.url, a.slug, { name: 'a', n: String(i) }));
      expect(ofA.filter((p) => p.status === 201)).toHaveLength(A_POSTS);
      // B right behind A: A's 400 fail twice each and take the ladder's three-minute step meanwhile.
      const started = performance.now();
      const ofB = await pool(B_POSTS, 4, (i) => post(ingest.url, b.slug, { name: 'b', n: String(i) }));
      const ids = ofB.map((p) => p.id);
      await eventually(() => ids.every((id) => quick.submissionIds().has(id!)), {
        timeoutMs: 30_000,
        message: 'every webhook of B',
      });
      const seconds = (performance.now() - started) / 1000;
      const { nats } = platform;
      const info = await nats.jsm.consumers.info(nats.names.deliveriesStream, 'delivery-send');
      console.log(
        `ack-pending stall: consumer ack pending ${info.num_ack_pending} ` +
          `(max ${info.config.max_ack_pending}); B's ${B_POSTS} webhooks all arrived ${seconds.toFixed(1)} s after ` +
          `its first post, ${quick.envelopes.length} requests`,
      );
      expect(info.config.max_ack_pending).toBe(MAX_ACK_PENDING);
      // Every one of A's deliveries waits in Postgres, none in JetStream and none failed for good: after its two failures
      // on the ladder's three-minute step, or, once its webhook broke (50 failures in a row), for the next probe.
      await eventually(
        async () => {
          const rows = await platform
            .db('deliveries as d')
            .leftJoin('delivery_parking as p', 'p.delivery_id', 'd.id')
            .where('d.form_id', a.formId)
            .select('d.status', 'd.attempt_count', 'p.delivery_id as parked');
          return (
            rows.length === A_POSTS &&
            rows.every((r) => r.parked && ['pending', 'retrying'].includes(r.status) && r.attempt_count <= 2)
          );
        },
        { timeoutMs: 30_000, message: "all of A's deliveries parked" },
      );
      expect(info.num_ack_pending).toBeLessThan(MAX_ACK_PENDING);
      expect(quick.envelopes).toHaveLength(B_POSTS);
      expect(quick.distinctIds().size).toBe(B_POSTS);
    } finally {
      await Promise.all([failing.close(), quick.close()]);
    }
  }, 120_000);
});

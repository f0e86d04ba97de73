import { eventually } from '@intake/shared/testing';
import { faultSuite, formWithReceiver, pool, post, startService, succeededDeliveries, tally } from './harness';

const BURST = 150;

/** A delivery process SIGKILLed in the middle of a burst: after a restart every delivery arrives, duplicates share the envelope id. */
describe('fault: delivery process killed mid-burst', () => {
  const suite = faultSuite();

  it('delivers every submission after a restart; duplicates only as at-least-once allows', async () => {
    const { platform, processes } = suite;
    const { target, slug, formId, env } = await formWithReceiver(platform, { delayMs: 300 });
    try {
      const ingest = await startService('ingest', env);
      const first = await startService('delivery', env, { ready: true });
      processes.push(ingest, first);

      const answers = await pool(BURST, 8, () => post(ingest.url, slug));
      expect(tally(answers.map((a) => a.status))).toEqual({ 201: BURST });
      const accepted = new Set(answers.map((a) => a.id));

      // Killed while sending (fan-out done, so the events consumer's 30 s ack deadline does not slow the test).
      await eventually(
        async () => (await platform.db('deliveries').where({ form_id: formId }).count({ n: '*' }).first())?.n == BURST,
        { timeoutMs: 20_000, message: 'the fan-out' },
      );
      await eventually(() => target.envelopes.length >= BURST / 5, {
        timeoutMs: 20_000,
        message: 'the first deliveries',
      });
      await first.stop('SIGKILL');
      const atKill = target.envelopes.length;
      processes.push(await startService('delivery', env, { ready: true }));

      await eventually(() => target.submissionIds().size === BURST, {
        timeoutMs: 30_000,
        message: `deliveries of all ${BURST} submissions (have ${target.submissionIds().size})`,
      });
      await eventually(async () => (await succeededDeliveries(platform, formId)) === BURST, {
        timeoutMs: 10_000,
        message: 'every delivery recorded as succeeded',
      });
      const rows = await platform.db('deliveries').where({ form_id: formId }).select('id', 'submission_id');
      const received = target.envelopes.length;
      const distinct = target.distinctIds();
      const duplicates = received - distinct.size;
      console.log(
        `delivery-kill: ${BURST} posts accepted, ${atKill} requests received before SIGKILL, ` +
          `${received} requests received in all, ${distinct.size} distinct envelope ids, ${duplicates} ` +
          `duplicates (same id), ${rows.length} deliveries rows`,
      );

      expect(target.submissionIds()).toEqual(accepted);
      expect(rows).toHaveLength(BURST);
      expect(distinct).toEqual(new Set(rows.map((r) => r.id)));
      // A duplicate can only be an attempt that was in flight when the process died (64 at most).
      expect(duplicates).toBeLessThanOrEqual(64);
    } finally {
      await target.close();
    }
  });
});

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
      // What the killed process had recorded: its state in Postgres no longer moves.
      const recordedBeforeKill = new Set(
        (await platform.db('deliveries').where({ form_id: formId, status: 'succeeded' }).select('id')).map((r) => r.id),
      );
      // Every connection so far is the killed process's: the next process has not started.
      const killedConnections = target.connectionsSoFar();
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
      const sentBeforeKill = target.idsOn(killedConnections);
      const received = target.envelopes.length;
      const distinct = target.distinctIds();
      const duplicates = received - distinct.size;
      console.log(
        `delivery-kill: ${BURST} posts accepted, ${sentBeforeKill.size} deliveries sent before SIGKILL, ` +
          `${received} requests received in all, ${distinct.size} distinct envelope ids, ${duplicates} ` +
          `duplicates (same id), ${rows.length} deliveries rows`,
      );

      expect(target.submissionIds()).toEqual(accepted);
      expect(rows).toHaveLength(BURST);
      expect(distinct).toEqual(new Set(rows.map((r) => r.id)));
      // A duplicate can only be an attempt the killed process had sent but not recorded: sent before the kill (on its
      // connections, whenever the receiver read it), never a delivery recorded as succeeded by then. (Not a count:
      // beside the 64 attempts at receivers, the records of attempts already answered wait their turn to be written,
      // more of them on a loaded machine: 69 were.)
      const counts = new Map<string, number>();
      for (const e of target.envelopes) counts.set(e.id, (counts.get(e.id) ?? 0) + 1);
      const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
      expect(twice.filter((id) => !sentBeforeKill.has(id) || recordedBeforeKill.has(id))).toEqual([]);
      expect(twice.length).toBeLessThanOrEqual(sentBeforeKill.size - recordedBeforeKill.size);
    } finally {
      await target.close();
    }
  });
});

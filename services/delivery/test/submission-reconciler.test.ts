import { emptyTestDatabaseUrl, eventually, factories, useStarted } from '@intake/shared/testing';
import { CONSUMERS } from '../src';
import { fanOutSubmissions } from '../src/domain/fan-out';
import { reconcileSubmissions } from '../src/domain/submission-reconciler';
import { formWithHook, receiver, startDelivery, storedWithoutEvent, submit } from './helpers';

// RECONCILE_AFTER is a day: the process's own reconciler leaves these submissions alone; the test's passes run a day on.
// A database of its own: a pass repairs every submission it finds, and other files leave theirs in the worker's.
const ctx = useStarted(async () =>
  startDelivery({ RECONCILE_AFTER: '1d', DATABASE_URL: await emptyTestDatabaseUrl('subreconciler') }),
);
const DAY = 86_400_000;

/** One pass of the submission reconciler, as the process runs it, a day after now (or `at`). */
const pass = (at = Date.now() + DAY + 1000) =>
  reconcileSubmissions({ ...ctx.platform, fanOutConsumer: CONSUMERS.fanOut, now: new Date(at), afterMs: DAY });

/** Every request the send consumer was handed has been settled (a second request would have been seen). */
async function sendConsumerIdle(): Promise<void> {
  const { nats } = ctx.platform;
  await eventually(async () => {
    const info = await nats.jsm.consumers.info(nats.names.deliveriesStream, CONSUMERS.send);
    return info.num_ack_pending === 0 && info.num_pending === 0;
  });
}

describe('the submission reconciler: a stored submission whose event never reached fan-out', () => {
  it('gets its webhook exactly once, only from the webhooks it had, and a second pass does nothing', async () => {
    // The reconciler running since before these submissions: its first pass, now, starts its walk a day back.
    expect(await pass(Date.now())).toEqual({ walked: 0, submissions: 0, deliveries: 0 });
    const target = await receiver();
    const newer = await receiver();
    try {
      const { hook, ...form } = await formWithHook(ctx.platform, { url: target.url });
      const about = (submissionId: string) =>
        target.requests.filter((r) => JSON.parse(r.body).data.submission_id === submissionId);

      // One submission through the fan-out as usual, one stored whose event was lost (never published).
      const delivered = await submit(ctx.platform, { ...form, payload: { name: 'Ada' } });
      await eventually(() => about(delivered.submission_id).length === 1);
      const lost = await storedWithoutEvent(ctx.platform, form, { name: 'Lin' });
      // A webhook made after the submission was received is not owed it.
      const later = await factories.webhook(ctx.platform, { ...form, url: newer.url });
      await ctx.platform
        .db('webhooks')
        .where({ id: later.id })
        .update({ created_at: new Date(Date.now() + 1000) });

      const first = await pass();
      expect(first).toMatchObject({ submissions: 1, deliveries: 1 });
      expect(first.walked).toBeGreaterThanOrEqual(2);
      await eventually(() => about(lost.submission_id).length === 1);
      expect(JSON.parse(about(lost.submission_id)[0]!.body).data).toMatchObject({
        submission_id: lost.submission_id,
        payload: { name: 'Lin' },
      });
      const deliveriesOf = async () =>
        (await ctx.platform.db('deliveries').where({ submission_id: lost.submission_id })).map((r) => [
          r.webhook_id,
          r.status,
        ]);
      await eventually(async () => (await deliveriesOf())[0]?.[1] !== 'pending');
      expect(await deliveriesOf()).toEqual([[hook.id, 'succeeded']]);

      // A second pass walks nothing; walked again from the start it finds every delivery there.
      expect(await pass()).toEqual({ walked: 0, submissions: 0, deliveries: 0 });
      await ctx.platform.db('reconciler_cursors').where({ name: 'submissions' }).update({ position: '' });
      expect(await pass()).toMatchObject({ submissions: 0, deliveries: 0 });
      // The lost event turning up after all (a stream restored): the deliveries' unique key makes its fan-out a no-op
      // (the newer webhook, which the consumer's fan-out would serve as of its time, is disabled first).
      await ctx.platform.db('webhooks').where({ id: later.id }).update({ enabled: false });
      expect(await fanOutSubmissions({ ...ctx.platform, events: [{ event: lost }], now: new Date() })).toBe(0);

      await sendConsumerIdle();
      expect(about(lost.submission_id)).toHaveLength(1);
      expect(about(delivered.submission_id)).toHaveLength(1);
      expect(newer.requests).toHaveLength(0);
    } finally {
      await target.close();
      await newer.close();
    }
  });
});

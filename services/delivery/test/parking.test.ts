import { eventually, factories, useStarted } from '@intake/shared/testing';
import { requeueDueDeliveries } from '../src/domain/parking';
import { accountWithForm, receiver, startDelivery, submit } from './helpers';

// The second retry waits two minutes: over PARK_AFTER_MS, so it is parked in Postgres, not left in JetStream.
const ctx = useStarted(() => startDelivery({ WEBHOOK_RETRY_SCHEDULE: '200ms,2m', WEBHOOK_TIMEOUT_MS: 2000 }));

const MINUTE = 60_000;

describe('a retry that waits over a minute', () => {
  it('leaves JetStream, waits in Postgres, and is asked for once when due', async () => {
    const { db, nats } = ctx.platform;
    const target = await receiver((_req, n, res) => {
      res.statusCode = n <= 2 ? 500 : 204;
      res.end();
    });
    try {
      const { accountId, formId } = await accountWithForm(ctx.platform);
      await factories.webhook(ctx.platform, { accountId, formId, url: target.url });
      await submit(ctx.platform, { accountId, formId });
      const parked = await eventually(
        () =>
          db('delivery_parking as p')
            .join('deliveries as d', 'd.id', 'p.delivery_id')
            .where('d.form_id', formId)
            .first('p.delivery_id', 'p.due_at'),
        { timeoutMs: 10_000 },
      );
      const delivery = await db('deliveries').where({ id: parked.delivery_id }).first();
      expect(delivery).toMatchObject({ status: 'retrying', attempt_count: 2 });
      expect(parked.due_at).toEqual(delivery.next_attempt_at);
      expect(delivery.next_attempt_at.getTime() - Date.now()).toBeGreaterThan(MINUTE);
      // Its message is acknowledged: nothing of it counts toward the consumer's max_ack_pending.
      await eventually(async () => {
        const info = await nats.jsm.consumers.info(nats.names.deliveriesStream, 'delivery-send');
        return info.num_ack_pending === 0 && info.num_pending === 0;
      });

      // Due now: two pumps at once (and the process's own, every 5 s) ask for it once, and the attempt is made once.
      const now = new Date();
      await db('deliveries').where({ id: delivery.id }).update({ next_attempt_at: now });
      await db('delivery_parking').where({ delivery_id: delivery.id }).update({ due_at: now });
      await Promise.all([1, 2].map(() => requeueDueDeliveries({ db, nats, now: new Date() })));
      await eventually(async () => (await db('deliveries').where({ id: delivery.id }).first()).status === 'succeeded');
      expect(target.requests.map((r) => r.headers['x-service-attempt'])).toEqual(['1', '2', '3']);

      // Settled, it is unparked when it next comes due (the process's pump); nothing is sent again.
      await db('delivery_parking').where({ delivery_id: delivery.id }).update({ due_at: new Date() });
      await eventually(async () => (await db('delivery_parking').where({ delivery_id: delivery.id })).length === 0, {
        timeoutMs: 15_000,
      });
      expect(target.requests).toHaveLength(3);
    } finally {
      await target.close();
    }
  });
});

import { firstIdAt, newId } from '@intake/shared/contracts';
import { ACK } from '@intake/shared/messaging';
import { eventually, factories, useStarted } from '@intake/shared/testing';
import { attemptLeaseMs, deliveryStore, processDeliveryRequests, SendSlots } from '../src';
import { reconcileDeliveries, requeueDueDeliveries } from '../src/domain/parking';
import type { ClaimAsk } from '../src/send/claim.repository';
import { BREAK, type Slot } from '../src/send/slots';
import { accountWithForm, failingFirst, formWithHook, receiver, startDelivery, submit } from './helpers';

// The second retry waits two minutes: over PARK_AFTER_MS, so it is parked in Postgres, not left in JetStream. The
// process's own reconciler leaves alone what this file's reconciler test makes (a day, not 15 minutes).
const ctx = useStarted(() =>
  startDelivery({ WEBHOOK_RETRY_SCHEDULE: '200ms,2m', WEBHOOK_TIMEOUT_MS: 2000, RECONCILE_AFTER: '1d' }),
);

const MINUTE = 60_000;

describe('a retry that waits over a minute', () => {
  it('leaves JetStream, waits in Postgres, and is asked for once when due', async () => {
    const { db, nats } = ctx.platform;
    const target = await receiver(failingFirst(2));
    try {
      const { accountId, formId } = await formWithHook(ctx.platform, { url: target.url });
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
      await Promise.all([1, 2].map(() => requeueDueDeliveries({ db, nats, now: new Date(), recheckMs: 5 * MINUTE })));
      await eventually(async () => (await db('deliveries').where({ id: delivery.id }).first()).status === 'succeeded');
      expect(target.requests.map((r) => r.headers['x-service-attempt'])).toEqual(['1', '2', '3']);

      // Settled, it is unparked when it next comes due; nothing is sent again.
      await db('delivery_parking').where({ delivery_id: delivery.id }).update({ due_at: new Date() });
      await requeueDueDeliveries({ db, nats, now: new Date(), recheckMs: 5 * MINUTE });
      expect(await db('delivery_parking').where({ delivery_id: delivery.id })).toEqual([]);
      expect(target.requests).toHaveLength(3);
    } finally {
      await target.close();
    }
  });
});

describe('the reconciler', () => {
  it('hands each delivery still waiting after RECONCILE_AFTER to the parking pump, once, and it is sent once', async () => {
    const { db, nats } = ctx.platform;
    const target = await receiver((_req, _n, res) => {
      res.statusCode = 204;
      res.end();
    });
    try {
      const { accountId, formId, hook: webhook } = await formWithHook(ctx.platform, { url: target.url });
      // Deliveries as a fan-out made them, whose requests a lost stream took: two twenty minutes old (one of them has
      // since succeeded), one a minute old. Ids are ULIDs, so an id says when its delivery was made.
      const made = async (minutesAgo: number, n: number, status: string, eventType = 'submission.created') => {
        // Stored without an event: the running process's fan-out must not make (and send) its delivery.
        const submissionId = newId('submission');
        await db('submissions').insert({
          id: submissionId,
          account_id: accountId,
          form_id: formId,
          status: 'received',
          payload: '{}',
        });
        const id = `${firstIdAt('delivery', Date.now() - minutesAgo * MINUTE).slice(0, -3)}00${n}`;
        await db('deliveries').insert({
          id,
          account_id: accountId,
          webhook_id: webhook.id,
          form_id: formId,
          submission_id: submissionId,
          event_type: eventType,
          data: JSON.stringify({ submission_id: submissionId }),
          status,
        });
        return id;
      };
      const lost = await made(20, 1, 'pending');
      await made(20, 2, 'succeeded');
      const young = await made(1, 3, 'pending');
      // A test ping whose process stopped before recording it: failed, never sent later.
      const ping = await made(20, 4, 'pending', 'webhook.test');
      // The walk starts from the beginning (other tests of this database moved it on).
      await db('reconciler_cursors').delete();

      const now = new Date();
      const reconcile = () =>
        reconcileDeliveries({ db, nats, sendConsumer: 'delivery-send', now, afterMs: 15 * MINUTE });
      const steps = await Promise.all([reconcile(), reconcile()]);
      // Two processes at once: one holds the cursor per step, so between them every delivery is walked once (the
      // database may hold thousands from other tests) and the lost one parked once.
      const total = (key: 'walked' | 'parked') =>
        steps.reduce((n, step) => n + (step === 'backlog' ? 0 : step[key]), 0);
      expect(total('parked')).toBe(1);
      const bound = firstIdAt('delivery', now.getTime() - 15 * MINUTE);
      expect(total('walked')).toBe(
        Number((await db('deliveries').where('id', '<', bound).count({ n: '*' }).first())?.n),
      );
      // Walking again finds nothing new; the young one is left to its own request.
      expect(await reconcile()).toEqual({ walked: 0, parked: 0 });
      expect(await db('delivery_parking').whereIn('delivery_id', [young, ping])).toEqual([]);
      expect(await db('deliveries').where({ id: ping }).first()).toMatchObject({
        status: 'failed',
        last_error: expect.stringMatching(/test ping stopped/),
      });

      // A pump (the process's own runs every 5 s) asks for the lost one: it is sent once.
      await requeueDueDeliveries({ db, nats, now: new Date(), recheckMs: 5 * MINUTE });
      await eventually(async () => (await db('deliveries').where({ id: lost }).first()).status === 'succeeded');
      expect(target.requests.map((r) => r.headers['x-service-delivery'])).toEqual([lost]);
      expect((await db('deliveries').where({ id: young }).first()).status).toBe('pending');
    } finally {
      await target.close();
    }
  });
});

describe('the parking pump beside a broken webhook', () => {
  it('asks for one of its due deliveries, the probe, and keeps the others parked until about the next one', async () => {
    const { db, nats } = ctx.platform;
    const { accountId, formId } = await accountWithForm(ctx.platform);
    // Only this test's parked deliveries (other files of this database left theirs).
    await db('delivery_parking').delete();
    // Disabled: the running process leaves its deliveries alone; this pump is the test's.
    const broken = await factories.webhook(ctx.platform, { accountId, formId, enabled: false });
    const fine = await factories.webhook(ctx.platform, { accountId, formId, enabled: false });
    const parked = async (webhookId: string) => {
      const delivery = await factories.delivery(db, { accountId, webhookId, formId });
      await db('delivery_parking').insert({ delivery_id: delivery.id, due_at: new Date(Date.now() - 1000) });
      return delivery.id as string;
    };
    const ofBroken = [await parked(broken.id), await parked(broken.id), await parked(broken.id)];
    const ofFine = await parked(fine.id);
    const slots = {
      brokenFor: (webhookId: string) => (webhookId === broken.id ? { probeInMs: 0, probeEveryMs: 4000 } : undefined),
    };
    const now = new Date();
    const asked = await requeueDueDeliveries({ db, nats, now, recheckMs: 5 * MINUTE, slots });
    expect(asked).toBe(2); // the fine webhook's, and one probe of the broken one's
    const due = new Map(
      (await db('delivery_parking').whereIn('delivery_id', [...ofBroken, ofFine])).map((r) => [
        r.delivery_id,
        r.due_at.getTime() - now.getTime(),
      ]),
    );
    // Asked for: looked at again RECONCILE_AFTER on; kept back: about the next probe.
    expect([...due.values()].filter((ms) => ms === 5 * MINUTE)).toHaveLength(2);
    expect([...due.values()].filter((ms) => ms === 4000)).toHaveLength(2);
    expect(due.get(ofFine)).toBe(5 * MINUTE);
  });
});

describe('requests for a broken webhook', () => {
  it('are parked until about its next probe in one statement, before any of their deliveries is read', async () => {
    const { db } = ctx.platform;
    const { accountId, formId } = await accountWithForm(ctx.platform);
    const broken = await factories.webhook(ctx.platform, { accountId, formId, enabled: false });
    const slots = new SendSlots({ total: 64, perEndpoint: 8 });
    const target = { accountId, webhookId: broken.id };
    for (let i = 0; i < BREAK.after; i++) (slots.take(target) as Slot).release(false);
    const ids = await Promise.all(
      [1, 2, 3].map(
        async () => (await factories.delivery(db, { accountId, webhookId: broken.id, formId })).id as string,
      ),
    );
    // One more whose delivery was deleted meanwhile (its submission erased): skipped, not an error for the others.
    const request = (id: string) => ({
      request: {
        event_id: `${id}.initial`,
        delivery_id: id,
        trigger: 'schedule' as const,
        webhook_id: broken.id,
        account_id: accountId,
      },
    });
    const store = deliveryStore(db, attemptLeaseMs(2000));
    const claimed: string[] = [];
    const deps = {
      db,
      slots,
      store: { ...store, claim: (asks: ClaimAsk[]) => (claimed.push(...asks.map((a) => a.id)), store.claim(asks)) },
      secrets: ctx.platform.secrets,
      agent: undefined as never,
      config: ctx.platform.config,
      now: () => new Date(),
    };
    const started = Date.now();
    const outcomes = await Promise.all(await processDeliveryRequests(deps, [...ids, newId('delivery')].map(request)));
    expect(outcomes).toEqual([ACK, ACK, ACK, ACK]);
    expect(claimed).toEqual([]);
    const rows = await db('delivery_parking').whereIn('delivery_id', ids);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row.due_at.getTime() - started).toBeGreaterThanOrEqual(BREAK.firstMs / 2 - 50);
    const leases = await db('deliveries').whereIn('id', ids).pluck('lease_until');
    expect(leases).toEqual([null, null, null]);
  });
});

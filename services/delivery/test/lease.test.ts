import { withPooledConnection } from '@intake/shared/base';
import { newId } from '@intake/shared/contracts';
import { eventually, factories, useTestPlatform } from '@intake/shared/testing';
import { attemptLeaseMs, deliveryStore, MAX_ATTEMPTS, processDeliveryRequests, SendSlots } from '../src';
import { createWebhookAgent } from '../src/send/attempt';
import { CLAIM_DELIVERIES, claimDeliveries } from '../src/send/claim.repository';
import { receiver } from './helpers';

const platform = useTestPlatform();

/** A receiver that answers after `delayMs`, or when `gate` resolves. */
async function setUp(delayMs: number | Promise<void>, leaseMs = attemptLeaseMs(2000)) {
  const target = await receiver((_r, _n, res) =>
    typeof delayMs === 'number' ? setTimeout(() => res.end('ok'), delayMs) : void delayMs.then(() => res.end('ok')),
  );
  const agent = createWebhookAgent({ allowPrivateNetworks: true, timeoutMs: 2000 });
  const account = await factories.account(platform.db);
  const form = await factories.form(platform.db, account.id);
  const hook = await factories.webhook(platform, { accountId: account.id, formId: form.id, url: target.url });
  const { id } = await factories.delivery(platform.db, {
    accountId: account.id,
    webhookId: hook.id,
    formId: form.id,
    submissionId: newId('submission'),
  });
  const deps = {
    db: platform.db,
    secrets: platform.secrets,
    agent,
    config: { ...platform.config, WEBHOOK_TIMEOUT_MS: 2000 },
    now: () => new Date(),
    store: deliveryStore(platform.db, leaseMs),
    slots: new SendSlots({ total: 64, perEndpoint: 8 }),
  };
  const request = { event_id: `${id}.initial`, delivery_id: id, trigger: 'schedule' as const };
  return {
    target,
    id,
    deps,
    handle: async () => (await processDeliveryRequests(deps, [{ request }]))[0]!,
    close: async () => {
      await agent.close();
      await target.close();
    },
  };
}

/** Runs `test` on a new delivery to a receiver that answers after `delayMs`, and closes both after. */
async function withDelivery(delayMs: number, test: (t: Awaited<ReturnType<typeof setUp>>) => Promise<void>) {
  const t = await setUp(delayMs);
  try {
    await test(t);
  } finally {
    await t.close();
  }
}

/**
 * A copy of a delivery request handled while another process makes the attempt (a
 * redelivery, another replica) sends nothing; it comes back when the attempt's lease ends.
 */
describe('the attempt lease on a delivery: copies handled while an attempt runs', () => {
  it('sends two copies handled at once only once; the second waits, then finds the delivery done', async () => {
    await withDelivery(300, async (t) => {
      const outcomes = await Promise.all([t.handle(), t.handle()]);
      expect(t.target.requests).toHaveLength(1);
      expect(outcomes).toContainEqual({ ack: true });
      const waiting = outcomes.find((o) => 'retryInMs' in o) as { retryInMs: number } | undefined;
      expect(waiting?.retryInMs).toBeGreaterThanOrEqual(50);
      expect(waiting?.retryInMs).toBeLessThanOrEqual(4000);
      // The copy comes back: the delivery has succeeded, nothing is sent.
      expect(await t.handle()).toEqual({ ack: true });
      expect(t.target.requests).toHaveLength(1);
      expect(
        await platform.db('deliveries').where({ id: t.id }).first('status', 'attempt_count', 'lease_until'),
      ).toEqual({ status: 'succeeded', attempt_count: 1, lease_until: null });
    });
  });

  it('waits out the lease of a process that died mid-attempt, then makes the attempt', async () => {
    await withDelivery(0, async (t) => {
      await platform
        .db('deliveries')
        .where({ id: t.id })
        .update({ lease_until: platform.db.raw("now() + interval '800 milliseconds'") });
      const first = await t.handle();
      expect(first).toEqual({ retryInMs: expect.any(Number) });
      expect((first as { retryInMs: number }).retryInMs).toBeGreaterThan(50);
      expect(t.target.requests).toHaveLength(0);
      const deadline = Date.now() + 10_000;
      let outcome = first;
      while ('retryInMs' in outcome && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, (outcome as { retryInMs: number }).retryInMs));
        outcome = await t.handle();
      }
      expect(outcome).toEqual({ ack: true });
      expect(t.target.requests).toHaveLength(1);
    });
  });
});

describe('the attempt lease on a delivery: kept while the attempt runs', () => {
  it('extends the lease of an attempt that outlasts it, so a copy handled meanwhile sends nothing', async () => {
    // A lease far shorter than the attempt, as when a starved process takes longer than twice the time-out.
    const leaseMs = 400;
    let answer!: () => void;
    const t = await setUp(new Promise<void>((resolve) => (answer = resolve)), leaseMs);
    const keeper = t.deps.store.start(platform.logger);
    try {
      const first = t.handle();
      await eventually(() => t.target.requests.length === 1, { message: 'the attempt at the receiver' });
      const sentAt = Date.now();
      const lease = async () =>
        (await platform.db('deliveries').where({ id: t.id }).first(platform.db.raw('lease_until > now() AS held')))
          .held as boolean;
      // Three leases' time later the attempt still holds its delivery.
      await eventually(async () => Date.now() - sentAt > 3 * leaseMs && (await lease()), {
        message: 'the lease kept past its length',
      });
      expect(await t.handle()).toEqual({ retryInMs: expect.any(Number) });
      expect(t.target.requests).toHaveLength(1);

      answer();
      expect(await first).toEqual({ ack: true });
      // Recorded: the lease has ended and stays ended; the copy finds the delivery done.
      await keeper.stop();
      expect(await platform.db('deliveries').where({ id: t.id }).first('status', 'lease_until')).toEqual({
        status: 'succeeded',
        lease_until: null,
      });
      expect(await t.handle()).toEqual({ ack: true });
      expect(t.target.requests).toHaveLength(1);
    } finally {
      answer();
      await keeper.stop();
      await t.close();
    }
  });
});

describe('the attempt lease on a delivery: claiming and committing a lease', () => {
  it('leases a delivery asked for twice in one claim once, and never one that is done, disabled or early', async () => {
    await withDelivery(0, async (t) => {
      const ask = { id: t.id, trigger: 'schedule' as const, leaseMs: 4000 };
      const [first, second] = await claimDeliveries(platform.db, [ask, ask], MAX_ATTEMPTS);
      expect(first?.lease).toEqual({ taken: true });
      expect(second?.lease).toEqual({ taken: false, remainingMs: 4000 });
      const leaseOf = async () =>
        (await platform.db('deliveries').where({ id: t.id }).first('lease_until')).lease_until;
      await platform.db('deliveries').where({ id: t.id }).update({ lease_until: null });

      // Done: read, not leased.
      await platform.db('deliveries').where({ id: t.id }).update({ status: 'succeeded' });
      const [done] = await claimDeliveries(platform.db, [ask], MAX_ATTEMPTS);
      expect(done?.target?.status).toBe('succeeded');
      expect(done?.lease.taken).toBe(false);
      expect(await leaseOf()).toBeNull();

      // Disabled webhook: not leased, even for a replay.
      await platform.db('deliveries').where({ id: t.id }).update({ status: 'pending' });
      await platform.db('webhooks').where({ id: first!.target!.webhook_id }).update({ enabled: false });
      const [disabled] = await claimDeliveries(platform.db, [{ ...ask, trigger: 'replay' }], MAX_ATTEMPTS);
      expect(disabled?.lease.taken).toBe(false);
      expect(await leaseOf()).toBeNull();
      await platform.db('webhooks').where({ id: first!.target!.webhook_id }).update({ enabled: true });

      // Redelivered before its retry is due: the copy waits for the step and gives back the lease it took.
      await platform
        .db('deliveries')
        .where({ id: t.id })
        .update({ status: 'retrying', next_attempt_at: platform.db.raw("now() + interval '30 seconds'") });
      const early = await t.handle();
      expect(early).toEqual({ retryInMs: expect.any(Number) });
      expect((early as { retryInMs: number }).retryInMs).toBeGreaterThan(20_000);
      expect(await leaseOf()).toBeNull();
      expect(t.target.requests).toHaveLength(0);
    });
  });
  it('takes its lease in a commit that does not wait for the WAL flush, visible at once, the connection left as it was', async () => {
    await withDelivery(0, async (t) => {
      const values = [[t.id], ['schedule'], [4000], MAX_ATTEMPTS];
      const modes = await withPooledConnection(platform.db, async (connection) => {
        const mode = async () =>
          ((await connection.query('SHOW synchronous_commit')).rows[0] as { synchronous_commit: string })
            .synchronous_commit;
        // Inside a transaction block, what the statement set for its transaction shows before the end.
        await connection.query('BEGIN');
        await connection.query({ ...CLAIM_DELIVERIES, values });
        const inside = await mode();
        await connection.query('ROLLBACK');
        // As the send path runs it, on its own: its transaction commits, and the connection's own setting is back.
        const claimed = (await connection.query({ ...CLAIM_DELIVERIES, values })).rows as { taken: boolean }[];
        return { inside, after: await mode(), taken: claimed.map((r) => r.taken) };
      });
      expect(modes).toEqual({ inside: 'off', after: 'on', taken: [true] });
      // Another session sees the lease at once.
      const row = await platform.db('deliveries').where({ id: t.id }).first('lease_until');
      expect(row.lease_until).not.toBeNull();
    });
  });
});

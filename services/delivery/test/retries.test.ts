import { eventually, factories, useStarted } from '@intake/shared/testing';
import { answering, failingFirst, formWithHook, receiver, startDelivery, submit } from './helpers';

const LADDER = [200, 400, 600, 800];

const ctx = useStarted(() =>
  startDelivery({
    WEBHOOK_RETRY_SCHEDULE: LADDER.map((ms) => `${ms}ms`).join(','),
    WEBHOOK_TIMEOUT_MS: 2000,
  }),
);

describe('the retry ladder: every attempt failing', () => {
  it('makes 5 attempts spaced by the schedule, keeps the id, refreshes created_at, then marks the delivery failed', async () => {
    const target = await receiver(answering(503, 'down for maintenance'));
    try {
      const { accountId, formId } = await formWithHook(ctx.platform, { url: target.url });
      await submit(ctx.platform, { accountId, formId });
      await eventually(() => target.requests.length === 5, { timeoutMs: 15_000 });
      const envelopes = target.requests.map((r) => JSON.parse(r.body));
      const id = envelopes[0].id;
      expect(envelopes.every((e) => e.id === id)).toBe(true);
      expect(new Set(envelopes.map((e) => e.created_at)).size).toBe(5);
      expect(target.requests.map((r) => r.headers['x-service-attempt'])).toEqual(['1', '2', '3', '4', '5']);
      const gaps = target.requests.slice(1).map((r, i) => r.at - (target.requests[i] as { at: number }).at);
      console.log(`retry gaps on a ${LADDER.join('/')} ms ladder: ${gaps.join('/')} ms`);
      // Never earlier than the step (the jitter only adds to it); how much later is the machine's, not the ladder's: an
      // upper bound failed under load (1,742 ms for an 800 ms step), and a gross delay fails the wait for 5 above.
      gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual((LADDER[i] as number) - 10));
      const delivery = await eventually(() => ctx.platform.db('deliveries').where({ id, status: 'failed' }).first());
      expect(delivery).toMatchObject({
        attempt_count: 5,
        last_status_code: 503,
        last_error: 'receiver answered 503',
        next_attempt_at: null,
      });
      const attempts = await ctx.platform.db('delivery_attempts').where({ delivery_id: id }).orderBy('id');
      // The receiver is on loopback (private networks allowed): its status is logged, its answer's body never.
      expect(attempts.map((a) => [a.attempt, a.status_code, a.response_body])).toEqual(
        [1, 2, 3, 4, 5].map((n) => [n, 503, null]),
      );
      // Nothing more is scheduled after the fifth failure: the message is gone from the work queue.
      const { nats } = ctx.platform;
      await eventually(async () => {
        const info = await nats.jsm.consumers.info(nats.names.deliveriesStream, 'delivery-send');
        return info.num_pending === 0 && info.num_ack_pending === 0;
      });
      expect(target.requests).toHaveLength(5);
    } finally {
      await target.close();
    }
  });
});

/** Posts to a new form whose webhook goes to `url`; its delivery once it has succeeded, the retries it took waited for. */
async function succeededDelivery(url: string) {
  const owner = await formWithHook(ctx.platform, { url });
  const event = await submit(ctx.platform, owner);
  return eventually(
    () => ctx.platform.db('deliveries').where({ submission_id: event.submission_id, status: 'succeeded' }).first(),
    { timeoutMs: 10_000 },
  );
}

describe('the retry ladder: a later success, and what counts as a failure', () => {
  it('succeeds on a later attempt: a retry after two failures is acknowledged', async () => {
    const target = await receiver(failingFirst(2));
    try {
      const delivery = await succeededDelivery(target.url);
      expect(delivery).toMatchObject({ attempt_count: 3, last_status_code: 204, last_error: null });
      expect(target.requests.map((r) => r.headers['x-service-attempt'])).toEqual(['1', '2', '3']);
    } finally {
      await target.close();
    }
  });

  it('waits as long as a 429 or 503 asks in Retry-After when that is longer than the ladder step, never less', async () => {
    const target = await receiver((_req, n, res) => {
      res.statusCode = n === 1 ? 429 : n === 2 ? 503 : 204;
      // 2 s against a 200 ms first step; 0 s against a 400 ms second step (the ladder's step wins).
      if (n <= 2) res.setHeader('retry-after', n === 1 ? '2' : '0');
      res.end();
    });
    try {
      await succeededDelivery(target.url);
      const [first, second, third] = target.requests.map((r) => r.at) as [number, number, number];
      expect(second - first).toBeGreaterThanOrEqual(1990);
      expect(third - second).toBeGreaterThanOrEqual((LADDER[1] as number) - 10);
    } finally {
      await target.close();
    }
  });

  it('counts a redirect (not followed) and a refused connection as failures', async () => {
    const other = await receiver();
    const target = await receiver((_req, _n, res) => {
      res.statusCode = 307;
      res.setHeader('location', other.url);
      res.end();
    });
    try {
      const { accountId, formId } = await formWithHook(ctx.platform, { url: target.url });
      const closed = await receiver();
      await closed.close();
      await factories.webhook(ctx.platform, { accountId, formId, url: closed.url });
      const event = await submit(ctx.platform, { accountId, formId });
      const rows = await eventually(async () => {
        const r = await ctx.platform
          .db('deliveries')
          .where({ submission_id: event.submission_id })
          .whereIn('status', ['retrying', 'failed']);
        return r.length === 2 && r;
      });
      expect(rows.map((r) => r.last_error).sort()).toEqual([
        expect.stringMatching(/^ECONNREFUSED/),
        'receiver answered 307',
      ]);
      expect(other.requests).toHaveLength(0);
    } finally {
      await Promise.all([target.close(), other.close()]);
    }
  });
});

import type { Platform } from '@intake/shared/runtime';
import { eventually, factories, useStarted } from '@intake/shared/testing';
import { formWithHook, receiver, startDelivery, submit } from './helpers';

/**
 * Long enough that, on a loaded machine too, the other receiver is served before any hanging attempt times out: what
 * these tests check is that order (no hanging attempt recorded yet when the other is served), not a time.
 */
const TIMEOUT_MS = 4000;

/** The attempts recorded so far for the deliveries of `formId`. */
async function attemptsOf(platform: Pick<Platform, 'db'>, formId: string) {
  return platform
    .db('delivery_attempts')
    .join('deliveries', 'deliveries.id', 'delivery_attempts.delivery_id')
    .where('deliveries.form_id', formId)
    .select('delivery_attempts.id');
}

/** A receiver that never answers and one that answers at once; `close()` closes both. */
async function hangingAndFast() {
  const hanging = await receiver(() => undefined);
  const fast = await receiver();
  return { hanging, fast, close: () => Promise.all([hanging.close(), fast.close()]) };
}

/** Posts to `owner`'s form and waits until `fast` has it: the post, and how long that took. */
async function servedAtOnce(
  platform: Platform,
  fast: Awaited<ReturnType<typeof receiver>>,
  owner: { accountId: string; formId: string },
) {
  const started = Date.now();
  const quick = await submit(platform, owner);
  await eventually(() => fast.requests.some((r) => r.body.includes(quick.submission_id)));
  return { quick, ms: Date.now() - started };
}

/** Delivery with a webhook time-out of TIMEOUT_MS and retries 10 s apart (none within a test). */
const startHanging = () => startDelivery({ WEBHOOK_TIMEOUT_MS: TIMEOUT_MS, WEBHOOK_RETRY_SCHEDULE: '10s' });

/** Two new accounts' forms, one with a webhook to the hanging receiver (`slowOwner`), one to the fast one. */
async function ownersOf(platform: Platform, receivers: { hanging: { url: string }; fast: { url: string } }) {
  const slowOwner = await formWithHook(platform, { url: receivers.hanging.url });
  const fastOwner = await formWithHook(platform, { url: receivers.fast.url });
  return { slowOwner, fastOwner };
}

describe('a receiver that hangs', () => {
  const ctx = useStarted(startHanging);

  it('times out after WEBHOOK_TIMEOUT_MS and never delays another receiver’s deliveries', async () => {
    const { hanging, fast, close } = await hangingAndFast();
    try {
      const { slowOwner, fastOwner } = await ownersOf(ctx.platform, { hanging, fast });
      // Several hanging deliveries first, then the fast receiver's.
      const stuck = await Promise.all([1, 2, 3].map(() => submit(ctx.platform, slowOwner)));
      await eventually(() => hanging.requests.length === 3);
      const { quick, ms } = await servedAtOnce(ctx.platform, fast, fastOwner);
      console.log(`fast receiver served in ${ms} ms while 3 deliveries hung`);
      // Served while the three attempts still hang (none has timed out and been recorded yet).
      const stuckIds = (
        await ctx.platform
          .db('deliveries')
          .whereIn(
            'submission_id',
            stuck.map((e) => e.submission_id),
          )
          .select('id')
      ).map((r) => r.id);
      expect(await ctx.platform.db('delivery_attempts').whereIn('delivery_id', stuckIds)).toEqual([]);
      // Recorded once its answer is read, a moment after the receiver saw the request.
      const served = await eventually(async () => {
        const row = await ctx.platform.db('deliveries').where({ submission_id: quick.submission_id }).first();
        return row?.status === 'succeeded' && row;
      });
      expect(served).toMatchObject({ status: 'succeeded' });

      const timedOut = await eventually(async () => {
        const rows = await ctx.platform
          .db('deliveries')
          .whereIn(
            'submission_id',
            stuck.map((e) => e.submission_id),
          )
          .where({ status: 'retrying' });
        return rows.length === 3 && rows;
      });
      expect(timedOut.map((r) => r.last_error)).toEqual([
        `no answer within ${TIMEOUT_MS} ms`,
        `no answer within ${TIMEOUT_MS} ms`,
        `no answer within ${TIMEOUT_MS} ms`,
      ]);
      const attempts = await ctx.platform.db('delivery_attempts').whereIn(
        'delivery_id',
        timedOut.map((r) => r.id),
      );
      for (const a of attempts) {
        expect(a.status_code).toBeNull();
        // It waited for its timeout (the receiver never answers: the error above says the timeout ended it).
        expect(a.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
      }
    } finally {
      await close();
    }
  });
});

describe('a hanging receiver beside another account', () => {
  const ctx = useStarted(startHanging);

  it('gives a hanging webhook only its own slots: another account’s webhook is served at once beside 100 stuck posts', async () => {
    const { hanging, fast, close } = await hangingAndFast();
    try {
      const { slowOwner, fastOwner } = await ownersOf(ctx.platform, { hanging, fast });
      // More stuck posts than the process has send slots (SEND_CONCURRENCY, 64).
      await Promise.all(Array.from({ length: 100 }, () => submit(ctx.platform, slowOwner)));
      await eventually(() => hanging.requests.length >= 8);
      const { ms } = await servedAtOnce(ctx.platform, fast, fastOwner);
      console.log(`fast receiver served in ${ms} ms beside 100 hanging posts`);
      // Before any hanging attempt timed out; the hanging webhook had at most its account's share (48 of 64 slots).
      const held = hanging.requests.length;
      expect(await attemptsOf(ctx.platform, slowOwner.formId)).toEqual([]);
      expect(held).toBeLessThanOrEqual(48);
    } finally {
      await close();
    }
  });

  it('leaves the same account’s other webhooks room beside its hanging one', async () => {
    const { hanging, fast, close } = await hangingAndFast();
    try {
      const owner = await formWithHook(ctx.platform, { url: hanging.url });
      const otherForm = await factories.form(ctx.platform.db, owner.accountId);
      const second = { accountId: owner.accountId, formId: otherForm.id };
      await factories.webhook(ctx.platform, { ...second, url: fast.url });
      await Promise.all(Array.from({ length: 100 }, () => submit(ctx.platform, owner)));
      await eventually(() => hanging.requests.length >= 8);
      const { ms } = await servedAtOnce(ctx.platform, fast, second);
      console.log(`the account's other webhook served in ${ms} ms beside its 100 hanging posts`);
      // Before any attempt timed out, the hanging webhook held at most its account's share less 8 (40).
      const held = hanging.requests.length;
      expect(await attemptsOf(ctx.platform, owner.formId)).toEqual([]);
      expect(held).toBeLessThanOrEqual(40);
    } finally {
      await close();
    }
  });
});

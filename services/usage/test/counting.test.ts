import { periodKey } from '@intake/shared/contracts';
import { eventually, factories } from '@intake/shared/testing';
import { USAGE_CONSUMER, ensureUsageConsumer, recordSubmissionEvents } from '../src';
import { processedCount, startUsage, type UsageHarness } from './helpers';

async function monthTotals(h: UsageHarness, accountId: string, period: string) {
  const daily = await h.platform
    .db('usage_daily')
    .where({ account_id: accountId })
    .andWhere('day', '>=', period)
    .first(
      h.platform.db.raw(
        'coalesce(sum(received),0)::int as received, coalesce(sum(spam),0)::int as spam, coalesce(sum(file_bytes),0)::bigint as file_bytes',
      ),
    );
  const counters = await h.platform
    .db('usage_counters')
    .where({ account_id: accountId, period })
    .first('used', 'spam', 'file_bytes');
  return { daily, counters };
}

let h: UsageHarness;
beforeAll(async () => {
  // Workers start inside the tests, once some messages have been taken by a "crashed" replica.
  h = await startUsage({ workers: false });
});
afterAll(() => h.close());

describe('usage consumer: counting over real JetStream and Postgres: a burst, crashes and duplicates', () => {
  it('counts a burst with redeliveries, republished duplicates and spam exactly once, agreeing with ingest’s used', async () => {
    const { db, nats } = h.platform;
    const account = await factories.account(db, { plan: 'pro' });
    const [formA, formB] = [await factories.form(db, account.id), await factories.form(db, account.id)];
    await ensureUsageConsumer(h.platform, { ackWaitMs: 1000 });

    // The burst: 40 received (some with files) and 15 spam, committed concurrently across two forms.
    const received = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        factories.submission(h.platform, {
          accountId: account.id,
          formId: i % 2 ? formA.id : formB.id,
          files: i % 4 === 0 ? [{ size: 1000 }] : [],
        }),
      ),
    );
    const spam = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        factories.submission(h.platform, {
          accountId: account.id,
          formId: i % 2 ? formA.id : formB.id,
          status: 'spam',
        }),
      ),
    );
    const all = [...received, ...spam].map((s) => s.eventId);
    await eventually(async () => (await nats.jsm.streams.info(nats.names.eventsStream)).state.messages >= all.length, {
      message: 'the relay published the burst',
    });

    // A replica took 10 messages and died before acking them; it had counted 5 of them already.
    const consumer = await nats.js.consumers.get(nats.names.eventsStream, USAGE_CONSUMER);
    const taken = await consumer.fetch({ max_messages: 10, expires: 2000 });
    let n = 0;
    for await (const msg of taken) {
      if (n++ % 2 === 0) await recordSubmissionEvents({ db, events: [msg.json()], now: h.platform.clock.now() });
      if (n === 10) break;
    }
    expect(n).toBe(10);

    // A relay republished 10 events after the dedup window (same event_id, new Nats-Msg-Id).
    const republished = [...received, ...spam].slice(0, 10).map((s) => s.event);
    for (const event of republished)
      await nats.js.publish(nats.names.subject('submission.created'), JSON.stringify(event), {
        msgID: `${String(event.event_id)}-again`,
      });
    expect(republished).toHaveLength(10);

    await h.startWorkers({ ackWaitMs: 1000 });
    await eventually(() => processedCount(h.platform, all).then((c) => c === all.length), {
      message: 'every event processed',
    });
    await eventually(
      async () => (await nats.jsm.consumers.info(nats.names.eventsStream, USAGE_CONSUMER)).num_ack_pending === 0,
      { message: 'every message acked' },
    );
    const info = await nats.jsm.consumers.info(nats.names.eventsStream, USAGE_CONSUMER);
    // Every delivery bumps the consumer sequence: the 10 abandoned messages were delivered a second time.
    expect(info.delivered.consumer_seq - info.delivered.stream_seq).toBeGreaterThanOrEqual(10);

    const period = periodKey(h.platform.clock.now());
    const { daily, counters } = await monthTotals(h, account.id, period);
    expect(counters).toEqual({ used: 40, spam: 15, file_bytes: 10 * 1000 });
    expect(daily).toEqual({ received: counters.used, spam: 15, file_bytes: 10_000 });
    const perForm = await db('usage_daily')
      .where({ account_id: account.id })
      .groupBy('form_id')
      .select('form_id', db.raw('sum(received)::int as received'), db.raw('sum(spam)::int as spam'));
    expect(perForm.sort((a, b) => a.form_id.localeCompare(b.form_id))).toEqual(
      [
        { form_id: formA.id, received: 20, spam: 7 },
        { form_id: formB.id, received: 20, spam: 8 },
      ].sort((a, b) => a.form_id.localeCompare(b.form_id)),
    );
  });
});

describe('usage consumer: counting over real JetStream and Postgres: days, months and poison messages', () => {
  it('counts each submission in its own UTC day and month, even when the event arrives later', async () => {
    const { db } = h.platform;
    const account = await factories.account(db);
    const form = await factories.form(db, account.id);
    const late = await factories.submission(h.platform, {
      accountId: account.id,
      formId: form.id,
      receivedAt: new Date('2031-01-31T23:59:59.999Z'),
    });
    const early = await factories.submission(h.platform, {
      accountId: account.id,
      formId: form.id,
      receivedAt: new Date('2031-02-01T00:00:00.000Z'),
      status: 'spam',
    });
    await eventually(() => processedCount(h.platform, [late.eventId, early.eventId]).then((c) => c === 2));
    /** The account's rows of `table` by `date` (as YYYY-MM-DD), with the `counts` columns. */
    const rowsBy = (table: string, date: string, ...counts: string[]) =>
      db(table)
        .where({ account_id: account.id })
        .orderBy(date)
        .select(db.raw(`to_char(??, 'YYYY-MM-DD') as ??`, [date, date]), ...counts);
    expect(await rowsBy('usage_daily', 'day', 'received', 'spam')).toEqual([
      { day: '2031-01-31', received: 1, spam: 0 },
      { day: '2031-02-01', received: 0, spam: 1 },
    ]);
    expect(await rowsBy('usage_counters', 'period', 'used', 'spam')).toEqual([
      { period: '2031-01-01', used: 1, spam: 0 },
      { period: '2031-02-01', used: 0, spam: 1 },
    ]);
  });

  it('drops poison messages (not a submission event, unknown account) without blocking the ones behind them', async () => {
    const { db, nats } = h.platform;
    const account = await factories.account(db);
    const form = await factories.form(db, account.id);
    await nats.js.publish(nats.names.subject('submission.created'), JSON.stringify({ hello: 'world' }));
    await nats.js.publish(nats.names.subject('submission.created'), 'not json');
    const ghost = {
      event_id: 'evt_ghost',
      submission_id: 'sub_x',
      form_id: form.id,
      account_id: 'acc_gone',
      status: 'received',
      received_at: new Date().toISOString(),
      payload: {},
      files: [],
      file_bytes: 0,
      form_name: 'x',
    };
    await nats.js.publish(nats.names.subject('submission.created'), JSON.stringify(ghost));
    const good = await factories.submission(h.platform, { accountId: account.id, formId: form.id });
    await eventually(() => processedCount(h.platform, [good.eventId]).then((c) => c === 1));
    await eventually(
      async () => (await nats.jsm.consumers.info(nats.names.eventsStream, USAGE_CONSUMER)).num_ack_pending === 0,
      { message: 'poison messages terminated, not parked' },
    );
    expect(await db('processed_events').where({ event_id: 'evt_ghost' }).first()).toBeUndefined();
  });
});

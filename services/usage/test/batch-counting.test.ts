import { newId, periodKey, type SubmissionEvent } from '@intake/shared/contracts';
import { createTestPlatform, factories, type TestPlatform } from '@intake/shared/testing';
import { recordSubmissionEvents } from '../src/domain/record-event';

function event(props: Partial<SubmissionEvent> & Pick<SubmissionEvent, 'account_id' | 'form_id'>): SubmissionEvent {
  return {
    event_id: newId('event'),
    submission_id: newId('submission'),
    status: 'received',
    received_at: new Date().toISOString(),
    payload: { name: 'Ada' },
    files: [],
    file_bytes: 0,
    form_name: 'Test form',
    ...props,
  };
}

let platform: TestPlatform;
beforeAll(async () => {
  platform = await createTestPlatform();
});
afterAll(() => platform.close());

/** The usage consumer counts the events that arrive together in one transaction, each exactly once. */
describe('usage: counting a batch of events in one transaction', () => {
  it('counts received, spam and file bytes per form and day once each, whatever repeats in or across batches', async () => {
    const { db } = platform;
    const account = await factories.account(db, { plan: 'pro' });
    const [a, b] = [await factories.form(db, account.id), await factories.form(db, account.id)];
    const yesterday = new Date(Date.now() - 24 * 3600 * 1000).toISOString();
    const events = [
      ...Array.from({ length: 20 }, (_, i) =>
        event({ account_id: account.id, form_id: i % 2 ? a.id : b.id, file_bytes: i % 5 === 0 ? 100 : 0 }),
      ),
      ...Array.from({ length: 6 }, () => event({ account_id: account.id, form_id: a.id, status: 'spam' })),
      event({ account_id: account.id, form_id: b.id, received_at: yesterday }),
    ];
    const first = await recordSubmissionEvents({ db, events: [...events.slice(0, 10), events[0]!], now: new Date() });
    expect(first.duplicates.size).toBe(0);
    // The second batch repeats the first ten (redeliveries) and holds the rest.
    const second = await recordSubmissionEvents({ db, events, now: new Date() });
    expect([...second.duplicates].sort()).toEqual(
      events
        .slice(0, 10)
        .map((e) => e.event_id)
        .sort(),
    );

    const rows = await db('usage_daily')
      .where({ account_id: account.id })
      .orderBy(['form_id', 'day'])
      .select('form_id', db.raw("to_char(day, 'YYYY-MM-DD') as day"), 'received', 'spam', db.raw('file_bytes::int'));
    const today = new Date().toISOString().slice(0, 10);
    expect(rows).toEqual(
      [
        { form_id: a.id, day: today, received: 10, spam: 6, file_bytes: 200 },
        { form_id: b.id, day: yesterday.slice(0, 10), received: 1, spam: 0, file_bytes: 0 },
        { form_id: b.id, day: today, received: 10, spam: 0, file_bytes: 200 },
      ].sort((x, y) => (x.form_id === y.form_id ? x.day.localeCompare(y.day) : x.form_id.localeCompare(y.form_id))),
    );
    const counters = await db('usage_counters')
      .where({ account_id: account.id, period: periodKey(new Date()) })
      .first('spam', db.raw('file_bytes::int'));
    expect(counters).toEqual({ spam: 6, file_bytes: 400 });
  });

  it('rolls the whole batch back when one event cannot be counted (its account is gone)', async () => {
    const { db } = platform;
    const account = await factories.account(db);
    const form = await factories.form(db, account.id);
    const good = event({ account_id: account.id, form_id: form.id });
    const ghost = event({ account_id: newId('account'), form_id: form.id });
    await expect(recordSubmissionEvents({ db, events: [good, ghost], now: new Date() })).rejects.toThrow();
    expect(await db('processed_events').whereIn('event_id', [good.event_id, ghost.event_id])).toEqual([]);
    expect(await db('usage_daily').where({ account_id: account.id })).toEqual([]);
  });
});

describe('usage: counting a batch of events in one transaction, statements and warnings', () => {
  it('counts a batch with one statement between BEGIN and COMMIT; a quota warning due is queued in the same transaction', async () => {
    const { db } = platform;
    const now = new Date();
    const quiet = await factories.account(db);
    const quietForm = await factories.form(db, quiet.id);
    const sent: string[] = [];
    const record = (query: { sql: string }) => sent.push(query.sql);
    db.on('query', record);
    try {
      await recordSubmissionEvents({
        db,
        events: Array.from({ length: 5 }, () => event({ account_id: quiet.id, form_id: quietForm.id })),
        now,
      });
    } finally {
      db.off('query', record);
    }
    expect(sent.map((sql) => sql.trim().split(/\s+/)[0]!.toUpperCase())).toEqual(['BEGIN;', 'WITH', 'COMMIT;']);

    // 8 of 10 used (ingest counts `used`): the batch's account gets its 80 % warning, queued once.
    const warned = await factories.account(db, { quota: 10, contactEmail: 'owner@example.test' });
    const warnedForm = await factories.form(db, warned.id);
    await db('usage_counters').insert({ account_id: warned.id, period: periodKey(now), used: 8 });
    const batch = () =>
      recordSubmissionEvents({ db, events: [event({ account_id: warned.id, form_id: warnedForm.id })], now });
    const { warningIds } = await batch();
    expect(warningIds).toHaveLength(1);
    expect(await db('notifications').where({ id: warningIds[0] }).first('kind', 'status', 'recipients')).toEqual({
      kind: 'quota-80',
      status: 'pending',
      recipients: ['owner@example.test'],
    });
    expect((await batch()).warningIds).toEqual([]);
  });
});

import { withPooledConnection } from '@intake/shared/base';
import { newId } from '@intake/shared/contracts';
import { factories, useTestPlatform } from '@intake/shared/testing';
import { RETENTION, sweepRetention } from '../src/lifecycle/retention';
import { sweepVictims } from '../src/lifecycle/retention.repository';

describe('retention sweep', () => {
  const platform = useTestPlatform();

  it('deletes expired idempotency keys and old processed marks, and nothing else', async () => {
    const { db } = platform;
    // Now, not a date years ahead: then every key and mark other tests left in this database would be due too, and a
    // sweep of one row a statement would take as long as there are.
    const now = new Date();
    const account = await factories.account(db);
    const form = await factories.form(db, account.id);
    const unpublished = newId('event');
    await db('outbox').insert({
      event_id: unpublished,
      subject: 'submission.created',
      payload: '{}',
      created_at: new Date('2029-01-01'),
    });
    await db('idempotency_keys').insert([
      { form_id: form.id, key: 'expired', submission_id: newId('submission'), expires_at: new Date(now.getTime() - 1) },
      {
        form_id: form.id,
        key: 'live',
        submission_id: newId('submission'),
        expires_at: new Date(now.getTime() + 60_000),
      },
    ]);
    const consumer = `sweep-test-${newId('event')}`;
    await db('processed_events').insert([
      { consumer, event_id: 'old', processed_at: new Date(now.getTime() - RETENTION.processedEventsMs - 1000) },
      { consumer, event_id: 'recent', processed_at: new Date(now.getTime() - 1000) },
    ]);

    const swept = await sweepRetention({ db, now, batch: 1 });
    expect(swept.idempotencyKeys).toBeGreaterThanOrEqual(1);
    expect(swept.processedEvents).toBeGreaterThanOrEqual(1);
    expect(await db('idempotency_keys').where({ form_id: form.id }).pluck('key')).toEqual(['live']);
    expect(await db('processed_events').where({ consumer }).pluck('event_id')).toEqual(['recent']);
    expect(await db('outbox').where({ event_id: unpublished }).pluck('event_id')).toEqual([unpublished]);
    await db('outbox').where({ event_id: unpublished }).delete();
  });

  it('finds the old processed marks through an index on their age, not by reading the table', async () => {
    const { db } = platform;
    const now = new Date();
    const query = sweepVictims
      .processedEvents(db, { before: new Date(now.getTime() - RETENTION.processedEventsMs), batch: 5000 })
      .toSQL()
      .toNative();
    // A week of marks in one transaction, rolled back: the plan of the sweep's batch over them.
    const plan = await withPooledConnection(db, async (connection) => {
      await connection.query('BEGIN');
      try {
        await connection.query(
          `INSERT INTO processed_events (consumer, event_id, processed_at)
           SELECT 'plan-test', 'evt_' || n, now() - (n || ' seconds')::interval FROM generate_series(1, 100000) AS n`,
        );
        await connection.query('ANALYZE processed_events');
        const { rows } = await connection.query(`EXPLAIN (FORMAT JSON) ${query.sql}`, query.bindings as unknown[]);
        return JSON.stringify(rows[0]['QUERY PLAN']);
      } finally {
        await connection.query('ROLLBACK');
      }
    });
    expect(plan).toContain('processed_events_processed_at_idx');
    expect(plan).not.toContain('Seq Scan');
  });
});

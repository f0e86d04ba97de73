import { AckPolicy, DeliverPolicy } from 'nats';
import { eventually, startTestRelay, useTestPlatform } from './testing';
import { enqueueEvent } from './outbox';

describe('outbox relay', () => {
  const platform = useTestPlatform();

  async function published(): Promise<{ id: string; body: Record<string, unknown> }[]> {
    const durable = `probe_${Date.now()}`;
    await platform.nats.jsm.consumers.add(platform.nats.names.eventsStream, {
      durable_name: durable,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
    });
    const consumer = await platform.nats.js.consumers.get(platform.nats.names.eventsStream, durable);
    const messages: { id: string; body: Record<string, unknown> }[] = [];
    const info = await platform.nats.jsm.streams.info(platform.nats.names.eventsStream);
    for (let i = 0; i < info.state.messages; i++) {
      const msg = await consumer.next({ expires: 1000 });
      if (msg) messages.push({ id: msg.headers?.get('Nats-Msg-Id') ?? '', body: msg.json() });
    }
    await platform.nats.jsm.consumers.delete(platform.nats.names.eventsStream, durable);
    return messages;
  }
  const publishedIds = async () => (await published()).map((m) => m.id);

  it('publishes committed events once, with the event id as Nats-Msg-Id, and nothing from rolled-back transactions', async () => {
    const committed = await platform.db.transaction((trx) =>
      enqueueEvent(trx, { subject: 'submission.created', payload: { n: 1 } }),
    );
    let rolledBack = '';
    await platform.db
      .transaction(async (trx) => {
        rolledBack = await enqueueEvent(trx, { subject: 'submission.created', payload: { n: 2 } });
        throw new Error('rollback');
      })
      .catch(() => undefined);
    expect(rolledBack).toMatch(/^evt_/);
    const relay = startTestRelay(platform);
    try {
      // published, then removed in the same transaction
      await eventually(async () => (await platform.db('outbox').where({ event_id: committed }).first()) === undefined);
      // a second drain finds nothing more to publish for it
      await relay.drain();
      const ids = await publishedIds();
      expect(ids.filter((id) => id === committed)).toHaveLength(1);
      expect(ids).not.toContain(rolledBack);
      // A second publish of the same event (a relay crash after publishing, before marking) is deduplicated by JetStream.
      const ack = await platform.nats.js.publish(platform.nats.names.subject('submission.created'), '{}', {
        msgID: committed,
      });
      expect(ack.duplicate).toBe(true);
    } finally {
      await relay.stop();
    }
  });

  it('publishes an event too large for NATS without its fields, drops one it cannot shrink, and goes on with the rest', async () => {
    const big = 'x'.repeat(1100 * 1024); // over the server's max_payload (1 MiB by default)
    const [large, hopeless, small] = await platform.db.transaction(async (trx) => [
      await enqueueEvent(trx, {
        subject: 'submission.created',
        payload: { submission_id: 'sub_large', payload: { essay: big } },
      }),
      await enqueueEvent(trx, { subject: 'submission.created', payload: { submission_id: 'sub_hopeless', note: big } }),
      await enqueueEvent(trx, {
        subject: 'submission.created',
        payload: { submission_id: 'sub_small', payload: { name: 'Ada' } },
      }),
    ]);
    const relay = startTestRelay(platform);
    try {
      await eventually(
        async () => (await platform.db('outbox').whereIn('event_id', [large, hopeless, small])).length === 0,
        { message: 'the three rows taken' },
      );
      const messages = await published();
      expect(messages.find((m) => m.id === large)?.body).toEqual({
        event_id: large,
        submission_id: 'sub_large',
        payload: {},
        payload_omitted: true,
      });
      expect(messages.find((m) => m.id === small)?.body).toEqual({
        event_id: small,
        submission_id: 'sub_small',
        payload: { name: 'Ada' },
      });
      expect(messages.map((m) => m.id)).not.toContain(hopeless);
    } finally {
      await relay.stop();
    }
  });
  it('deletes what it published in a transaction that does not wait for the WAL flush', async () => {
    // A delete lost in a Postgres crash only publishes its events again, which JetStream drops by
    // their Nats-Msg-Id (the first test): so the relay's commits need not share ingest's flushes.
    const queries: { sql: string; tx: string | undefined }[] = [];
    const note = (q: { sql: string; __knexTxId?: string }) => queries.push({ sql: q.sql, tx: q.__knexTxId });
    platform.db.on('query', note);
    const event = await platform.db.transaction((trx) =>
      enqueueEvent(trx, { subject: 'submission.created', payload: { n: 3 } }),
    );
    const relay = startTestRelay(platform);
    try {
      await eventually(async () => (await platform.db('outbox').where({ event_id: event }).first()) === undefined);
    } finally {
      await relay.stop();
      platform.db.off('query', note);
    }
    const deletes = queries.filter((q) => q.sql.includes('DELETE FROM outbox'));
    expect(deletes.length).toBeGreaterThan(0);
    for (const { tx } of deletes) {
      expect(tx).toBeDefined();
      expect(queries.filter((q) => q.tx === tx).map((q) => q.sql.trim())).toContain(
        'SET LOCAL synchronous_commit = off',
      );
    }
  });
});

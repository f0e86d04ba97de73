import { AckPolicy } from 'nats';
import { createTestPlatform, emptyTestDatabaseUrl, eventually, useStarted } from '../testing';
import { ACK, runConsumer } from './consumer';
import { outboxRow, startOutbox } from './outbox';

/**
 * When nats.js closes the connection for good (it does after some failures it deems final), the process makes a new
 * one by itself: `lostSince` says since when it was without one (liveness reads it), the consumers pull and the outbox
 * publishes on the new connection, and `eachConnection` hands it to whoever keeps core subscriptions. Before, a closed
 * connection stayed closed until the pod was restarted, which nothing asked for.
 */
// A database of its own: the relay publishes every outbox row, and other files leave theirs in the worker's.
const platform = useStarted(async () =>
  createTestPlatform({ DATABASE_URL: await emptyTestDatabaseUrl('natsreplace') }),
);

describe('a NATS connection closed for good', () => {
  it('is replaced by a new one, on which consuming and publishing resume', async () => {
    const { nats, db, logger } = platform;
    const subject = nats.names.subject('submission.replaced');
    const durable = `replaced_${Date.now()}`;
    await nats.jsm.consumers.add(nats.names.eventsStream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      filter_subject: subject,
    });
    const received: string[] = [];
    const consumer = runConsumer({
      nats,
      stream: nats.names.eventsStream,
      durable,
      logger,
      concurrency: 4,
      handleBatch: (messages) =>
        messages.map((m) => {
          received.push((m.data as { n: string }).n);
          return ACK;
        }),
    });
    const outbox = startOutbox({ db, nats, logger, relay: { databaseUrl: platform.config.DATABASE_DIRECT_URL } });
    const connections: boolean[] = [];
    const stopFollowing = nats.eachConnection((_nc, replacement) => connections.push(replacement));
    /** Writes an outbox row and relays it (the outbox's publisher on the connection of the moment). */
    const relayed = async (n: string): Promise<number> => {
      const row = outboxRow({ subject: 'submission.replaced', payload: { n } });
      await db('outbox').insert({ ...row, payload: JSON.stringify(row.payload) });
      return outbox.drain();
    };
    try {
      expect(await relayed('before')).toBe(1);
      await eventually(() => received.includes('before'), { message: 'the message before the close' });

      const old = nats.nc;
      await old.close();
      await eventually(() => nats.lostSince() !== undefined, { message: 'lostSince set once the connection closed' });
      await eventually(() => nats.nc !== old && !nats.nc.isClosed(), { message: 'a new connection' });
      expect(nats.lostSince()).toBeUndefined();
      expect(connections).toEqual([false, true]);

      await eventually(async () => (await relayed('after').catch(() => 0)) >= 1, { message: 'a publish on it' });
      await eventually(() => received.includes('after'), { timeoutMs: 20_000, message: 'the message after the close' });
    } finally {
      stopFollowing();
      await outbox.stop();
      await consumer.stop();
      await nats.jsm.consumers.delete(nats.names.eventsStream, durable).catch(() => undefined);
    }
  }, 60_000);
});

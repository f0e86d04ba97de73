import { AckPolicy } from 'nats';
import { ACK, runConsumer } from './nats';
import { createTestPlatform, eventually, type TestPlatform } from './testing';

describe('runConsumer', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await createTestPlatform();
  });
  afterAll(async () => {
    await platform.close();
  });

  /** Counts the acks in what the client writes to the server, and the writes that carry them. */
  function watchAcks(): { writes: number; acks: number; stop(): void } {
    // nats.js writes through its transport's `send`, one call per flush of its outbound buffer.
    const transport = (platform.nats.nc as unknown as { protocol: { transport: { send(frame: Uint8Array): void } } })
      .protocol.transport;
    const send = transport.send.bind(transport);
    const seen = { writes: 0, acks: 0, stop: () => void (transport.send = send) };
    transport.send = (frame) => {
      const acks = Buffer.from(frame).toString('latin1').split('+ACK').length - 1;
      if (acks > 0) {
        seen.writes++;
        seen.acks += acks;
      }
      send(frame);
    };
    return seen;
  }

  it('sends the acks of handlers that finish in the same turn of the event loop in one write', async () => {
    const stream = `${platform.nats.names.prefix.toUpperCase()}_ACKTEST`;
    const subject = platform.nats.names.subject('acktest');
    await platform.nats.jsm.streams.add({ name: stream, subjects: [subject] });
    let watched: ReturnType<typeof watchAcks> | undefined;
    let consumer: { stop(): Promise<void> } | undefined;
    try {
      await platform.nats.jsm.consumers.add(stream, { durable_name: 'acktest', ack_policy: AckPolicy.Explicit });
      // Published before the consumer starts, so they arrive together.
      for (let n = 0; n < 40; n++) await platform.nats.js.publish(subject, JSON.stringify({ n }));
      watched = watchAcks();
      consumer = runConsumer({
        nats: platform.nats,
        stream,
        durable: 'acktest',
        logger: platform.logger,
        concurrency: 64,
        // Each handler finishes in a callback of its own, as webhook sends finish on their own sockets.
        handle: () => new Promise((resolve) => setImmediate(() => resolve(ACK))),
      });
      await eventually(
        async () => {
          const info = await platform.nats.jsm.consumers.info(stream, 'acktest');
          return info.delivered.stream_seq === 40 && info.num_ack_pending === 0 && info.num_pending === 0;
        },
        { message: 'all 40 messages acknowledged' },
      );
      expect(watched.acks).toBe(40);
      // One write per ack before; now one per turn in which handlers finished (the 40 arrive in a few reads).
      expect(watched.writes).toBeLessThanOrEqual(10);
    } finally {
      watched?.stop();
      await consumer?.stop();
      await platform.nats.jsm.streams.delete(stream);
    }
  });

  it('hands a batch-only consumer the messages of a failed batch one at a time, as batches of one', async () => {
    const stream = `${platform.nats.names.prefix.toUpperCase()}_BATCHONLY`;
    const subject = platform.nats.names.subject('batchonly');
    await platform.nats.jsm.streams.add({ name: stream, subjects: [subject] });
    let consumer: { stop(): Promise<void> } | undefined;
    try {
      await platform.nats.jsm.consumers.add(stream, { durable_name: 'batchonly', ack_policy: AckPolicy.Explicit });
      for (let n = 0; n < 5; n++) await platform.nats.js.publish(subject, JSON.stringify({ n }));
      const batches: number[][] = [];
      consumer = runConsumer({
        nats: platform.nats,
        stream,
        durable: 'batchonly',
        logger: platform.logger,
        concurrency: 64,
        gatherMs: 50,
        // The batch of all five fails (one bad message), so each is handled alone, by this same function.
        handleBatch: async (batch) => {
          batches.push(batch.map(({ data }) => (data as { n: number }).n));
          if (batch.length > 1) throw new Error('one of these cannot be handled together');
          return batch.map(() => ACK);
        },
      });
      await eventually(
        async () => {
          const info = await platform.nats.jsm.consumers.info(stream, 'batchonly');
          return info.num_ack_pending === 0 && info.num_pending === 0;
        },
        { message: 'all 5 messages acknowledged' },
      );
      expect(batches[0]).toEqual([0, 1, 2, 3, 4]);
      expect(batches.slice(1).sort()).toEqual([[0], [1], [2], [3], [4]]);
    } finally {
      await consumer?.stop();
      await platform.nats.jsm.streams.delete(stream);
    }
  });
  it('with gatherWhileBusy, handles a message at once and those that arrive during its batch together after it', async () => {
    const stream = `${platform.nats.names.prefix.toUpperCase()}_BUSYGATHER`;
    const subject = platform.nats.names.subject('busygather');
    await platform.nats.jsm.streams.add({ name: stream, subjects: [subject] });
    let consumer: { stop(): Promise<void> } | undefined;
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      await platform.nats.jsm.consumers.add(stream, { durable_name: 'busygather', ack_policy: AckPolicy.Explicit });
      const batches: number[][] = [];
      consumer = runConsumer({
        nats: platform.nats,
        stream,
        durable: 'busygather',
        logger: platform.logger,
        concurrency: 64,
        gatherWhileBusy: true,
        handleBatch: async (batch) => {
          batches.push(batch.map(({ data }) => (data as { n: number }).n));
          // The first batch runs until the test lets it go.
          if (batches.length === 1) await held;
          return batch.map(() => ACK);
        },
      });
      await platform.nats.js.publish(subject, JSON.stringify({ n: 0 }));
      await eventually(() => batches.length === 1, { message: 'the first message handled on its own' });
      // Published one by one while the first batch runs: each arrives in a read of its own.
      for (let n = 1; n <= 5; n++) await platform.nats.js.publish(subject, JSON.stringify({ n }));
      await eventually(
        async () => (await platform.nats.jsm.consumers.info(stream, 'busygather')).num_ack_pending === 6,
        { message: 'all six delivered to the consumer' },
      );
      expect(batches).toEqual([[0]]);
      release();
      await eventually(
        async () => {
          const info = await platform.nats.jsm.consumers.info(stream, 'busygather');
          return info.num_ack_pending === 0 && info.num_pending === 0;
        },
        { message: 'all six acknowledged' },
      );
      expect(batches).toEqual([[0], [1, 2, 3, 4, 5]]);
    } finally {
      release();
      await consumer?.stop();
      await platform.nats.jsm.streams.delete(stream);
    }
  });
});

import { AckPolicy, type ConsumerInfo } from 'nats';
import { ACK, runConsumer, type ConsumerOptions } from './nats';
import { createTestPlatform, eventually, type TestPlatform } from '../testing';

/** What a test consumer is given; the stream, durable, connection and logger are the test stream's. */
type TestConsumerOptions = Omit<ConsumerOptions, 'nats' | 'stream' | 'durable' | 'logger'>;

describe('runConsumer', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await createTestPlatform();
  });
  afterAll(async () => {
    await platform.close();
  });

  /**
   * Runs `test` against a stream of its own with one durable consumer (`name`): `publish` posts
   * `{ n }`, `run` starts `runConsumer` on it, `info` reads the durable's state. The consumer is
   * stopped and the stream deleted afterwards.
   */
  async function withStream(
    name: string,
    test: (s: {
      publish(n: number): Promise<unknown>;
      run(options: TestConsumerOptions): void;
      info(): Promise<ConsumerInfo>;
    }) => Promise<void>,
  ): Promise<void> {
    const stream = `${platform.nats.names.prefix.toUpperCase()}_${name.toUpperCase()}`;
    const subject = platform.nats.names.subject(name);
    await platform.nats.jsm.streams.add({ name: stream, subjects: [subject] });
    let consumer: { stop(): Promise<void> } | undefined;
    try {
      await platform.nats.jsm.consumers.add(stream, { durable_name: name, ack_policy: AckPolicy.Explicit });
      await test({
        publish: (n) => platform.nats.js.publish(subject, JSON.stringify({ n })),
        run: (options) => {
          consumer = runConsumer({
            ...options,
            nats: platform.nats,
            stream,
            durable: name,
            logger: platform.logger,
          } as ConsumerOptions);
        },
        info: () => platform.nats.jsm.consumers.info(stream, name),
      });
    } finally {
      await consumer?.stop();
      await platform.nats.jsm.streams.delete(stream);
    }
  }

  /** Every message published was delivered and acknowledged. */
  const allAcknowledged = (info: ConsumerInfo): boolean => info.num_ack_pending === 0 && info.num_pending === 0;

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
    await withStream('acktest', async ({ publish, run, info }) => {
      // Published before the consumer starts, so they arrive together.
      for (let n = 0; n < 40; n++) await publish(n);
      const watched = watchAcks();
      try {
        run({
          concurrency: 64,
          // Each handler finishes in a callback of its own, as webhook sends finish on their own sockets.
          handle: () => new Promise((resolve) => setImmediate(() => resolve(ACK))),
        });
        await eventually(
          async () => {
            const state = await info();
            return state.delivered.stream_seq === 40 && allAcknowledged(state);
          },
          { message: 'all 40 messages acknowledged' },
        );
        expect(watched.acks).toBe(40);
        // One write per ack before; now one per turn in which handlers finished (the 40 arrive in a few reads).
        expect(watched.writes).toBeLessThanOrEqual(10);
      } finally {
        watched.stop();
      }
    });
  });

  it('hands a batch-only consumer the messages of a failed batch one at a time, as batches of one', async () => {
    await withStream('batchonly', async ({ publish, run, info }) => {
      for (let n = 0; n < 5; n++) await publish(n);
      const batches: number[][] = [];
      run({
        concurrency: 64,
        gatherMs: 50,
        // The batch of all five fails (one bad message), so each is handled alone, by this same function.
        handleBatch: async (batch) => {
          batches.push(batch.map(({ data }) => (data as { n: number }).n));
          if (batch.length > 1) throw new Error('one of these cannot be handled together');
          return batch.map(() => ACK);
        },
      });
      await eventually(async () => allAcknowledged(await info()), { message: 'all 5 messages acknowledged' });
      expect(batches[0]).toEqual([0, 1, 2, 3, 4]);
      expect(batches.slice(1).sort()).toEqual([[0], [1], [2], [3], [4]]);
    });
  });

  it("with gatherMs 'whileBusy', handles a message at once and those that arrive during its batch together after it", async () => {
    await withStream('busygather', async ({ publish, run, info }) => {
      let release = (): void => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      const batches: number[][] = [];
      run({
        concurrency: 64,
        gatherMs: 'whileBusy',
        handleBatch: async (batch) => {
          batches.push(batch.map(({ data }) => (data as { n: number }).n));
          // The first batch runs until the test lets it go.
          if (batches.length === 1) await held;
          return batch.map(() => ACK);
        },
      });
      try {
        await publish(0);
        await eventually(() => batches.length === 1, { message: 'the first message handled on its own' });
        // Published one by one while the first batch runs: each arrives in a read of its own.
        for (let n = 1; n <= 5; n++) await publish(n);
        await eventually(async () => (await info()).num_ack_pending === 6, {
          message: 'all six delivered to the consumer',
        });
        expect(batches).toEqual([[0]]);
      } finally {
        // Before the consumer stops (it waits for the batch it holds), even when an expectation failed.
        release();
      }
      await eventually(async () => allAcknowledged(await info()), { message: 'all six acknowledged' });
      expect(batches).toEqual([[0], [1, 2, 3, 4, 5]]);
    });
  });
});

import { AckPolicy, nanos, type ConsumerConfig, type ConsumerInfo } from 'nats';
import { SpanKind, trace } from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { ACK, FAILED_RETRY_MS, runConsumer, type ConsumerOptions, type Outcome } from './consumer';
import { resetTelemetryForTests, startTelemetry } from '../telemetry/sdk';
import { createTestPlatform, eventually, type TestPlatform } from '../testing';

/** What a test consumer is given; the stream, durable, connection and logger are the test stream's. */
type TestConsumerOptions = Omit<ConsumerOptions, 'nats' | 'stream' | 'durable' | 'logger'>;

/** The `n` of a test message. */
const nOf = (data: unknown): number => (data as { n: number }).n;

/* The test stream's platform, shared by every describe block of this file. */
let platform: TestPlatform;
beforeAll(async () => {
  platform = await createTestPlatform();
});
afterAll(async () => {
  await platform.close();
});

/**
 * Runs `test` against a stream of its own with one durable consumer (`name`): `publish` posts
 * `{ n }` (or a raw body), `run` starts `runConsumer` on it, `info` reads the durable's state.
 * The consumer is stopped and the stream deleted afterwards.
 */
async function withStream(
  name: string,
  test: (s: {
    publish(n: number | string): Promise<unknown>;
    run(options: TestConsumerOptions): { stop(): Promise<void> };
    info(): Promise<ConsumerInfo>;
  }) => Promise<void>,
  config: Partial<ConsumerConfig> = {},
): Promise<void> {
  const stream = `${platform.nats.names.prefix.toUpperCase()}_${name.toUpperCase()}`;
  const subject = platform.nats.names.subject(name);
  await platform.nats.jsm.streams.add({ name: stream, subjects: [subject] });
  let consumer: { stop(): Promise<void> } | undefined;
  try {
    await platform.nats.jsm.consumers.add(stream, { durable_name: name, ack_policy: AckPolicy.Explicit, ...config });
    await test({
      publish: (n) => platform.nats.js.publish(subject, typeof n === 'string' ? n : JSON.stringify({ n })),
      run: (options) => {
        consumer = runConsumer({ ...options, nats: platform.nats, stream, durable: name, logger: platform.logger });
        return consumer;
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

describe('runConsumer: batches', () => {
  it('sends the acks of messages that settle in the same turn of the event loop in one write', async () => {
    await withStream('acktest', async ({ publish, run, info }) => {
      // Published before the consumer starts, so they arrive together.
      for (let n = 0; n < 40; n++) await publish(n);
      const watched = watchAcks();
      try {
        run({
          concurrency: 64,
          // Each message settles in a callback of its own, as webhook sends finish on their own sockets.
          handleBatch: (messages) =>
            messages.map(() => new Promise<Outcome>((resolve) => setImmediate(() => resolve(ACK)))),
        });
        await eventually(
          async () => {
            const state = await info();
            return state.delivered.stream_seq === 40 && allAcknowledged(state);
          },
          { message: 'all 40 messages acknowledged' },
        );
        expect(watched.acks).toBe(40);
        // One write per ack before; now one per turn in which messages settled (the 40 arrive in a few reads).
        expect(watched.writes).toBeLessThanOrEqual(10);
      } finally {
        watched.stop();
      }
    });
  });

  it('hands the messages of a failed batch over again one at a time, as batches of one', async () => {
    await withStream('batchonly', async ({ publish, run, info }) => {
      for (let n = 0; n < 5; n++) await publish(n);
      const batches: number[][] = [];
      run({
        concurrency: 64,
        gatherMs: 50,
        // The batch of all five fails (one bad message), so each is handled alone, by this same function.
        handleBatch: async (batch) => {
          batches.push(batch.map(({ data }) => nOf(data)));
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
          batches.push(batch.map(({ data }) => nOf(data)));
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

describe('runConsumer: the messages it holds', () => {
  it('never holds more than `concurrency` messages, and one slow message holds only its own slot', async () => {
    await withStream('bounded', async ({ publish, run, info }) => {
      for (let n = 0; n < 12; n++) await publish(n);
      // Message 0 settles only when the test lets it; every other one when the test releases it.
      const waiting = new Map<number, () => void>();
      let most = 0;
      let releaseAll = false;
      run({
        concurrency: 3,
        handleBatch: (messages) =>
          messages.map(({ data }) => {
            // Released, a message leaves `waiting` at once (not a turn later), so the next look sees what is held.
            const settled = new Promise<Outcome>((resolve) => {
              const release = () => {
                if (waiting.get(nOf(data)) === release) waiting.delete(nOf(data));
                resolve(ACK);
              };
              waiting.set(nOf(data), release);
            });
            most = Math.max(most, waiting.size);
            // Once the test is over (passed or not), what still arrives settles at once, so the consumer can stop.
            if (releaseAll) waiting.get(nOf(data))!();
            return settled;
          }),
      });
      const acked = async () => (await info()).ack_floor.stream_seq;
      try {
        for (let released = 0; released < 11; released++) {
          await eventually(() => [...waiting.keys()].some((n) => n !== 0), { message: 'a message to release' });
          // What this process holds never exceeds the bound; the server's count follows it (an ack and the next
          // pull reach the consumer by separate routes inside the server, so it may briefly count one more).
          expect(waiting.size).toBeLessThanOrEqual(3);
          await eventually(async () => (await info()).num_ack_pending <= 3, { message: 'the server counts 3 at most' });
          waiting.get([...waiting.keys()].find((n) => n !== 0)!)!();
        }
        // Eleven settled while message 0 held its slot all along.
        await eventually(async () => (await info()).num_pending === 0 && waiting.size === 1, {
          message: 'all but the slow message settled',
        });
        expect(await acked()).toBe(0);
      } finally {
        // Before the consumer stops (it waits for the messages it holds), even when an expectation failed.
        releaseAll = true;
        for (const release of waiting.values()) release();
      }
      await eventually(async () => allAcknowledged(await info()), { message: 'the slow message acknowledged' });
      expect(most).toBeLessThanOrEqual(3);
    });
  });

  it('keeps every message it holds alive until it settles, so a slow handler sees no redelivery', async () => {
    await withStream(
      'keepalive',
      async ({ publish, run, info }) => {
        for (let n = 0; n < 3; n++) await publish(n);
        const seen: number[] = [];
        run({
          concurrency: 8,
          // Each message settles two and a half ack deadlines after it arrived.
          handleBatch: (messages) =>
            messages.map(({ data }) => {
              seen.push(nOf(data));
              return new Promise<Outcome>((resolve) => setTimeout(() => resolve(ACK), 2500));
            }),
        });
        await eventually(async () => allAcknowledged(await info()), {
          timeoutMs: 15_000,
          message: 'all three acknowledged',
        });
        const state = await info();
        expect(state.num_redelivered).toBe(0);
        expect(state.delivered.consumer_seq).toBe(3);
        expect(seen.sort()).toEqual([0, 1, 2]);
      },
      { ack_wait: nanos(1000) },
    );
  });
});

describe('runConsumer: failures and stopping', () => {
  it('terminates a message that is not JSON without handing it over', async () => {
    await withStream('poison', async ({ publish, run, info }) => {
      await publish('{not json');
      await publish(1);
      const handed: number[] = [];
      run({
        concurrency: 8,
        handleBatch: (messages) => messages.map(({ data }) => (handed.push(nOf(data)), ACK)),
      });
      await eventually(async () => allAcknowledged(await info()) && handed.length === 1, {
        message: 'both settled',
      });
      const state = await info();
      expect(handed).toEqual([1]);
      expect(state.delivered.consumer_seq).toBe(2); // the poison message was not redelivered
      expect(state.num_redelivered).toBe(0);
    });
  });

  it('naks with a delay a message whose handling throws, or whose own outcome rejects', async () => {
    await withStream('naks', async ({ publish, run, info }) => {
      const calls: { n: number; at: number }[] = [];
      run({
        concurrency: 8,
        handleBatch: (messages) => {
          const { data } = messages[0]!;
          calls.push({ n: nOf(data), at: Date.now() });
          const first = calls.filter((c) => c.n === nOf(data)).length === 1;
          if (first && nOf(data) === 0) throw new Error('the handler failed');
          if (first) return [Promise.reject(new Error('this message failed'))];
          return [ACK];
        },
      });
      await publish(0);
      await eventually(async () => allAcknowledged(await info()) && calls.length === 2, {
        message: 'message 0 handled again and acknowledged',
      });
      await publish(1);
      await eventually(async () => allAcknowledged(await info()) && calls.length === 4, {
        message: 'message 1 handled again and acknowledged',
      });
      for (const n of [0, 1]) {
        const [first, again] = calls.filter((c) => c.n === n);
        expect(again!.at - first!.at).toBeGreaterThanOrEqual(FAILED_RETRY_MS - 100);
      }
    });
  });

  it('stop() waits for the messages in flight and acknowledges them', async () => {
    await withStream('stopping', async ({ publish, run, info }) => {
      await publish(0);
      let started = false;
      let settled = false;
      const consumer = run({
        concurrency: 8,
        handleBatch: (messages) => {
          started = true;
          return messages.map(
            () =>
              new Promise<Outcome>((resolve) =>
                setTimeout(() => {
                  settled = true;
                  resolve(ACK);
                }, 300),
              ),
          );
        },
      });
      await eventually(() => started, { message: 'the message handed over' });
      await consumer.stop();
      expect(settled).toBe(true);
      await eventually(async () => allAcknowledged(await info()), { message: 'its ack reached the server' });
    });
  });
});

describe('runConsumer: tracing', () => {
  it('groups the same messages in the same batches with tracing on and off, and traces each message', async () => {
    const exporter = new tracing.InMemorySpanExporter();
    const sizesOf = async (name: string): Promise<{ sizes: number[]; traceIds: string[] }> => {
      const sizes: number[] = [];
      const traceIds: string[] = [];
      await withStream(name, async ({ publish, run, info }) => {
        for (let n = 0; n < 12; n++) await publish(n);
        run({
          concurrency: 64,
          gatherMs: 30,
          maxBatch: 5,
          handleBatch: (messages) => {
            sizes.push(messages.length);
            return messages.map(({ within }) => {
              traceIds.push(within(() => trace.getActiveSpan()?.spanContext().traceId ?? 'none'));
              return ACK;
            });
          },
        });
        await eventually(async () => allAcknowledged(await info()), { message: 'all 12 acknowledged' });
      });
      return { sizes, traceIds };
    };
    const off = await sizesOf('tracingoff');
    startTelemetry({
      serviceName: 'intake-test',
      env: {},
      spanProcessors: [new tracing.SimpleSpanProcessor(exporter)],
    });
    try {
      const on = await sizesOf('tracingon');
      expect(on.sizes).toEqual(off.sizes);
      expect(off.sizes).toEqual([5, 5, 2]);
      const spans = exporter
        .getFinishedSpans()
        .filter((s) => s.kind === SpanKind.CONSUMER && s.attributes['messaging.consumer.group.name'] === 'tracingon');
      expect(spans).toHaveLength(12);
      // Each message's work ran in its own span's trace.
      expect(new Set(on.traceIds)).toEqual(new Set(spans.map((s) => s.spanContext().traceId)));
    } finally {
      await resetTelemetryForTests();
    }
  });
});

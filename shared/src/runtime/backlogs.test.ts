import { AckPolicy } from 'nats';
import { eventually, startNatsServer, useMetrics, useTestPlatform, type OwnServer } from '../testing';
import { connectNatsInBackground, type Nats } from '../messaging/nats';
import { ensureConsumer, ensureStreams } from '../messaging/streams';
import { observeBacklogs, oldestPendingAge } from './backlogs';

describe('the age of a consumer’s oldest unacknowledged message', () => {
  const platform = useTestPlatform();

  it('is the age of the first message of its own subject after its ack floor, and 0 when it has none', async () => {
    const { nats } = platform;
    const stream = nats.names.eventsStream;
    const created = nats.names.subject('submission.created');
    await ensureConsumer(nats, stream, {
      durable_name: 'aging',
      ack_policy: AckPolicy.Explicit,
      filter_subject: created,
    });
    const info = () => nats.jsm.consumers.info(stream, 'aging');
    expect(await oldestPendingAge(nats, stream, await info())).toBe(0);

    // Another subject's message first (older, not the consumer's), then one of its own.
    await nats.js.publish(nats.names.subject('submission.spam'), '{}');
    const spamAt = Date.now();
    // An age is time passing: the two messages must be far enough apart to tell which one was measured.
    await eventually(() => Date.now() - spamAt >= 300, { intervalMs: 20 });
    const publishedAt = Date.now();
    await nats.js.publish(created, '{}');
    const age = await eventually(async () => {
      const seconds = await oldestPendingAge(nats, stream, await info());
      return seconds >= 0.5 && seconds;
    });
    // Its own message's age, not the older message's of another subject.
    expect(age).toBeLessThanOrEqual((Date.now() - publishedAt) / 1000 + 0.05);
  });
});

describe('the age of the oldest message a stream holds (intake.stream.oldest_age_seconds)', () => {
  const platform = useTestPlatform();
  const collect = useMetrics();
  const ages = async () => {
    const metric = await collect('intake.stream.oldest_age_seconds');
    return new Map((metric?.dataPoints ?? []).map((p) => [p.attributes['stream'], p.value as number]));
  };

  it('is 0 for an empty stream, and the age of its first message (the window a full stream keeps) once it has one', async () => {
    const { nats } = platform;
    const stop = observeBacklogs({ nats });
    try {
      expect((await ages()).get(nats.names.eventsStream)).toBe(0);
      const publishedAt = Date.now();
      await nats.js.publish(nats.names.subject('submission.spam'), '{}');
      await eventually(() => Date.now() - publishedAt >= 300, { intervalMs: 20 });
      await nats.js.publish(nats.names.subject('submission.spam'), '{}');
      const age = (await ages()).get(nats.names.eventsStream)!;
      // The first message's age, not the newest's.
      expect(age).toBeGreaterThanOrEqual(0.3);
      expect(age).toBeLessThanOrEqual((Date.now() - publishedAt) / 1000 + 0.05);
      expect((await ages()).get(nats.names.deliveriesStream)).toBe(0);
    } finally {
      stop();
    }
  });
});

/** A NATS server of the describe's own and a connection to it with Intake's streams made, both ended after it. */
function useOwnNats(prefix: string): { server: OwnServer; nats: Nats } {
  const own = {} as { server: OwnServer; nats: Nats };
  beforeAll(async () => {
    own.server = await startNatsServer();
    own.nats = connectNatsInBackground(own.server.url, `${prefix}${Date.now()}`, 'backlogs-test');
    await own.nats.connected;
    await ensureStreams(own.nats);
  });
  afterAll(async () => {
    await own.nats?.close();
    await own.server?.destroy();
  });
  return own;
}

/** What GET /v1/health no longer shows the public: each stream's replicas, and how many of them are current. */
describe('a stream’s replicas and current replicas (intake.stream.replicas, intake.stream.current_replicas)', () => {
  const collect = useMetrics();
  const own = useOwnNats('replicas');
  const byStream = async (name: string) =>
    new Map(((await collect(name))?.dataPoints ?? []).map((p) => [p.attributes['stream'], p.value as number]));

  it('are 1 and 1 for each stream on one server; a stream that does not answer has none current', async () => {
    const { nats } = own;
    const { eventsStream, deliveriesStream } = nats.names;
    const stop = observeBacklogs({ nats });
    try {
      const both = (events: number, deliveries: number) =>
        new Map([
          [eventsStream, events],
          [deliveriesStream, deliveries],
        ]);
      expect(await byStream('intake.stream.replicas')).toEqual(both(1, 1));
      expect(await byStream('intake.stream.current_replicas')).toEqual(both(1, 1));
      await nats.jsm.streams.delete(deliveriesStream);
      expect(await byStream('intake.stream.replicas')).toEqual(both(1, 1));
      expect(await byStream('intake.stream.current_replicas')).toEqual(both(1, 0));
    } finally {
      stop();
    }
  });
});

/**
 * `intake.nats.connected` of a process on a NATS server of the test's own, stopped and started again, and the send
 * consumer's `max_ack_pending` as NATS has it (changed after creation, as `nats consumer edit` would).
 */
describe('whether the process is connected to NATS, and a consumer’s max_ack_pending', () => {
  const collect = useMetrics();
  const own = useOwnNats('lows');
  const observed = async (name: string) => {
    const metric = await collect(name);
    return (metric?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value as number }));
  };

  it('is 1 while connected, 0 once NATS is gone, 1 again when it is back; max_ack_pending follows an edit', async () => {
    const { nats, server } = own;
    const stream = nats.names.deliveriesStream;
    const send = { durable_name: 'delivery-send', ack_policy: AckPolicy.Explicit, max_ack_pending: 100 };
    await ensureConsumer(nats, stream, send);
    await nats.jsm.consumers.update(stream, 'delivery-send', { max_ack_pending: 250 });
    const stop = observeBacklogs({ nats });
    try {
      expect(await observed('intake.nats.connected')).toEqual([{ attributes: {}, value: 1 }]);
      expect(await observed('intake.consumer.max_ack_pending')).toEqual([
        { attributes: { stream, consumer: 'delivery-send' }, value: 250 },
      ]);
      await server.stop();
      const cutOffAt = Date.now();
      await eventually(async () => (await observed('intake.nats.connected'))[0]?.value === 0, {
        message: 'intake.nats.connected to be 0 with NATS stopped',
      });
      // Cut off, the collection does not wait out JetStream timeouts (a scrape would time out, this gauge with it).
      expect(Date.now() - cutOffAt).toBeLessThan(5000);
      await server.start();
      await eventually(async () => (await observed('intake.nats.connected'))[0]?.value === 1, {
        timeoutMs: 30_000,
        message: 'intake.nats.connected to be 1 again',
      });
    } finally {
      stop();
    }
  });
});

import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { AckPolicy } from 'nats';
import { createTestPlatform, eventually, type TestPlatform } from '../testing';
import { ensureConsumer } from '../messaging/nats';
import { observeBacklogs, oldestPendingAge } from './backlogs';

describe('the age of a consumer’s oldest unacknowledged message', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await createTestPlatform();
  });
  afterAll(() => platform.close());

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

/** Collects when asked (a test's reader). */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

describe('the age of the oldest message a stream holds (intake.stream.oldest_age_seconds)', () => {
  let platform: TestPlatform;
  const reader = new TestReader();
  const provider = new MeterProvider({ readers: [reader] });
  beforeAll(async () => {
    platform = await createTestPlatform();
    metrics.setGlobalMeterProvider(provider);
  });
  afterAll(async () => {
    metrics.disable();
    await provider.shutdown();
    await platform.close();
  });
  const ages = async () => {
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .find((m) => m.descriptor.name === 'intake.stream.oldest_age_seconds');
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

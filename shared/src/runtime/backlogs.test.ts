import { AckPolicy } from 'nats';
import { createTestPlatform, eventually, type TestPlatform } from '../testing';
import { ensureConsumer } from '../messaging/nats';
import { oldestPendingAge } from './backlogs';

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

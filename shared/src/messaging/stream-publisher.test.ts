import { AckPolicy, DeliverPolicy, DiscardPolicy, headers } from 'nats';
import { createTestPlatform, type TestPlatform } from '../testing';
import { StreamPublisher, type StreamMessage } from './stream-publisher';

let platform: TestPlatform;
let publisher: StreamPublisher;
beforeAll(async () => {
  platform = await createTestPlatform();
  publisher = new StreamPublisher(platform.nats.nc);
});
afterAll(async () => {
  publisher.close();
  await platform.close();
});

const streamName = (tag: string) => `${platform.nats.names.prefix.toUpperCase()}_PUBTEST_${tag}`;
const subject = (tag: string) => platform.nats.names.subject(`pubtest.${tag}`);
const message = (tag: string, n: number): StreamMessage => ({
  subject: subject(tag),
  data: JSON.stringify({ n }),
  msgId: `${tag}-${n}`,
  headers: headers(),
});

async function stored(stream: string): Promise<{ n: number; msgId: string | undefined }[]> {
  const durable = `probe_${Date.now()}`;
  await platform.nats.jsm.consumers.add(stream, {
    durable_name: durable,
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.All,
  });
  const consumer = await platform.nats.js.consumers.get(stream, durable);
  const out: { n: number; msgId: string | undefined }[] = [];
  const { state } = await platform.nats.jsm.streams.info(stream);
  for (let i = 0; i < state.messages; i++) {
    const msg = await consumer.next({ expires: 1000 });
    if (msg) out.push({ n: msg.json<{ n: number }>().n, msgId: msg.headers?.get('Nats-Msg-Id') });
  }
  return out;
}

describe('StreamPublisher', () => {
  it('stores a batch in order with each Nats-Msg-Id, and a batch sent again is acknowledged without storing duplicates', async () => {
    const stream = streamName('ORDER');
    await platform.nats.jsm.streams.add({ name: stream, subjects: [subject('order')] });
    try {
      const batch = Array.from({ length: 50 }, (_, i) => message('order', i));
      await publisher.publishAll(batch, 5000);
      await publisher.publishAll(
        Array.from({ length: 50 }, (_, i) => message('order', i)),
        5000,
      );
      expect(await stored(stream)).toEqual(batch.map((m, i) => ({ n: i, msgId: m.msgId })));
    } finally {
      await platform.nats.jsm.streams.delete(stream);
    }
  });

  it('rejects a batch when no stream takes its subject', async () => {
    await expect(publisher.publishAll([message('nowhere', 1)], 2000)).rejects.toThrow(/no stream takes the subject/);
  });

  it('rejects a batch that is not answered in time, and the next batch still works when the late answer comes', async () => {
    const stream = streamName('SLOW');
    await platform.nats.jsm.streams.add({ name: stream, subjects: [subject('slow')] });
    // A plain subscriber on another subject answers like a stream, but late.
    const late: Promise<void>[] = [];
    let answered = 0;
    const responder = platform.nats.nc.subscribe(subject('late'), {
      callback: (_err, msg) =>
        late.push(
          new Promise((resolve) =>
            setTimeout(() => {
              answered += 1;
              resolve(void msg.respond(JSON.stringify({ stream: 'X', seq: 1 })));
            }, 400),
          ),
        ),
    });
    try {
      await expect(publisher.publishAll([message('late', 1)], 200)).rejects.toThrow(
        /did not acknowledge 1 of 1 messages within 200 ms/,
      );
      // Rejected on its own deadline, before the late answer came.
      expect(answered).toBe(0);
      await Promise.all(late);
      await publisher.publishAll([message('slow', 1)], 5000);
      expect(await stored(stream)).toEqual([{ n: 1, msgId: 'slow-1' }]);
    } finally {
      responder.unsubscribe();
      await platform.nats.jsm.streams.delete(stream);
    }
  });

  it('rejects a batch when the stream refuses a message', async () => {
    const stream = streamName('FULL');
    await platform.nats.jsm.streams.add({
      name: stream,
      subjects: [subject('full')],
      max_msgs: 1,
      discard: DiscardPolicy.New,
    });
    try {
      await expect(publisher.publishAll([message('full', 1), message('full', 2)], 5000)).rejects.toThrow(
        /JetStream refused a message/,
      );
      expect(await stored(stream)).toEqual([{ n: 1, msgId: 'full-1' }]);
    } finally {
      await platform.nats.jsm.streams.delete(stream);
    }
  });
});

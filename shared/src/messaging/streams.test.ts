import { DiscardPolicy } from 'nats';
import { createTestPlatform, type TestPlatform } from '../testing';
import { ensureStreams, type Nats } from './nats';

const MiB = 1_048_576;

describe('the streams’ size limit (NATS_STREAM_MAX_BYTES)', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await createTestPlatform();
  });
  afterAll(() => platform.close());

  const limits = async (nats: Nats) =>
    Promise.all(
      [nats.names.eventsStream, nats.names.deliveriesStream].map(async (name) => {
        const { config } = await nats.jsm.streams.info(name);
        return [config.max_bytes, config.discard];
      }),
    );

  it('is set when the setting is, kept as an operator left it when not; a full deliveries stream refuses', async () => {
    const nats = { ...platform.nats, maxStreamBytes: 2 * MiB };
    await ensureStreams(nats);
    expect(await limits(nats)).toEqual([
      [2 * MiB, DiscardPolicy.Old],
      [2 * MiB, DiscardPolicy.New],
    ]);
    await nats.jsm.streams.update(nats.names.deliveriesStream, { max_bytes: 3 * MiB });
    await ensureStreams({ ...nats, maxStreamBytes: undefined });
    expect((await limits(nats))[1]).toEqual([3 * MiB, DiscardPolicy.New]);

    // Nothing consumes here: the work queue fills, then refuses what would not fit rather than drop a request.
    await ensureStreams(nats);
    const subject = nats.names.subject('delivery.requested');
    const body = new Uint8Array(16 * 1024);
    let refused: unknown;
    let stored = 0;
    for (let i = 0; i < 200 && !refused; i++) {
      try {
        await nats.js.publish(subject, body, { msgID: `fill-${i}` });
        stored++;
      } catch (err) {
        refused = err;
      }
    }
    // nats-server 2.9 answers a publish past the limit without an acknowledgement (nats.js: NatsError 503).
    expect(refused).toBeInstanceOf(Error);
    expect(stored).toBeGreaterThan(100);
    const info = await nats.jsm.streams.info(nats.names.deliveriesStream);
    expect(info.state.messages).toBe(stored);
    expect(info.state.bytes).toBeLessThanOrEqual(2 * MiB);
  });
});

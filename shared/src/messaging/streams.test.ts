import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DiscardPolicy, nanos } from 'nats';
import { createTestPlatform, startNatsServer, testConfig, uniqueNatsPrefix, type TestPlatform } from '../testing';
import { connectNats, type Nats } from './nats';
import { ensureStreams, streamLimits, StreamProvisioningError } from './streams';

const MiB = 1_048_576;
const HOUR_MS = 3_600_000;

const limits = async (nats: Nats) =>
  Promise.all(
    [nats.names.eventsStream, nats.names.deliveriesStream].map(async (name) => {
      const { config } = await nats.jsm.streams.info(name);
      return { maxBytes: config.max_bytes, maxAge: config.max_age, discard: config.discard };
    }),
  );

describe('the streams’ bounds (NATS_EVENTS_MAX_BYTES, NATS_DELIVERIES_MAX_BYTES, NATS_EVENTS_MAX_AGE)', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    // The deprecated NATS_STREAM_MAX_BYTES stands in for the one bound not set.
    platform = await createTestPlatform({
      NATS_EVENTS_MAX_BYTES: 3 * MiB,
      NATS_STREAM_MAX_BYTES: 2 * MiB,
      NATS_EVENTS_MAX_AGE: '2h',
    });
  });
  afterAll(() => platform.close());

  it('reads each setting, the deprecated one filling in for an unset bound', () => {
    expect(platform.nats.streams).toEqual({
      eventsMaxBytes: 3 * MiB,
      deliveriesMaxBytes: 2 * MiB,
      eventsMaxAgeMs: 2 * HOUR_MS,
    });
    expect(streamLimits(testConfig({ NATS_DELIVERIES_MAX_BYTES: MiB }))).toEqual({
      eventsMaxBytes: undefined,
      deliveriesMaxBytes: MiB,
      eventsMaxAgeMs: undefined,
    });
    expect(() => testConfig({ NATS_EVENTS_MAX_AGE: '5m' })).toThrow(/NATS_EVENTS_MAX_AGE must be at least 10m/);
  });

  it('applies each bound to its own stream, and keeps what an operator set where a setting is unset', async () => {
    const nats = platform.nats;
    await ensureStreams(nats);
    expect(await limits(nats)).toEqual([
      { maxBytes: 3 * MiB, maxAge: nanos(2 * HOUR_MS), discard: DiscardPolicy.Old },
      { maxBytes: 2 * MiB, maxAge: nanos(7 * 24 * HOUR_MS), discard: DiscardPolicy.New },
    ]);
    // An operator changes both streams; a start with no setting keeps what they set (max_age no longer forced to 7 days).
    await nats.jsm.streams.update(nats.names.eventsStream, { max_bytes: 5 * MiB, max_age: nanos(3 * HOUR_MS) });
    await nats.jsm.streams.update(nats.names.deliveriesStream, { max_bytes: 4 * MiB });
    await ensureStreams({ ...nats, streams: {} });
    expect(await limits(nats)).toEqual([
      { maxBytes: 5 * MiB, maxAge: nanos(3 * HOUR_MS), discard: DiscardPolicy.Old },
      { maxBytes: 4 * MiB, maxAge: nanos(7 * 24 * HOUR_MS), discard: DiscardPolicy.New },
    ]);
    // One setting changes one stream only.
    await ensureStreams({ ...nats, streams: { deliveriesMaxBytes: MiB } });
    expect((await limits(nats)).map((l) => l.maxBytes)).toEqual([5 * MiB, MiB]);
  });

  it('a full deliveries stream refuses rather than drop a request', async () => {
    const nats = { ...platform.nats, streams: { deliveriesMaxBytes: 2 * MiB } };
    await ensureStreams(nats);
    // Nothing consumes here: the work queue fills, then refuses what would not fit rather than drop a request.
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

describe('bounds that do not fit the JetStream store', () => {
  // A server whose store holds 64 MiB (the review's measurement): its own store directory, with the size limit.
  const store = mkdtempSync(path.join(tmpdir(), 'intake-jsm-store-'));
  let server: Awaited<ReturnType<typeof startNatsServer>>;
  let nats: Nats;
  beforeAll(async () => {
    server = await startNatsServer({
      conf: `jetstream { store_dir: ${JSON.stringify(store)}, max_file_store: ${64 * MiB} }`,
    });
    nats = await connectNats(server.url, uniqueNatsPrefix(), 'streams-test');
  });
  afterAll(async () => {
    await nats?.close();
    await server?.destroy();
    rmSync(store, { recursive: true, force: true });
  });

  const streamNames = async () => {
    const names: string[] = [];
    for await (const info of nats.jsm.streams.list()) names.push(info.config.name);
    return names.sort();
  };

  it('are refused naming the setting and JetStream’s answer, leaving no stream half made; smaller ones then fit', async () => {
    const tooBig = { ...nats, streams: { eventsMaxBytes: 48 * MiB, deliveriesMaxBytes: 48 * MiB } };
    const err = await ensureStreams(tooBig).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamProvisioningError);
    expect(String((err as Error).message)).toMatch(/NATS_DELIVERIES_MAX_BYTES=50331648/);
    expect(String((err as Error).message)).toMatch(/JetStream answered: .*insufficient/i);
    expect(String((err as Error).message)).toMatch(/deleted again/);
    expect(await streamNames()).toEqual([]);

    // The deliveries stream needs a fraction of the events stream's bound: both fit the store together.
    await ensureStreams({ ...nats, streams: { eventsMaxBytes: 48 * MiB, deliveriesMaxBytes: 8 * MiB } });
    expect(await streamNames()).toEqual([nats.names.deliveriesStream, nats.names.eventsStream].sort());
    expect((await limits(nats)).map((l) => l.maxBytes)).toEqual([48 * MiB, 8 * MiB]);
  });
});

import { rmSync } from 'node:fs';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { buildServiceApp, createPlatform, ensureDatabase, migrate, createLogger, closePlatform, type Platform } from '@intake/shared';
import { eventually, factories, listen, startNatsServer, startPostgres, testConfig, type OwnServer } from '@intake/shared/testing';
import { ingestService } from '../src';
import { poster, publishedEvents, slugOf, startIngest, type IngestHarness } from './helpers';
import { localKeys } from './files';

describe('POST /v1/f/:slug — NATS down', () => {
  let nats: OwnServer;
  let h: IngestHarness;
  beforeAll(async () => {
    nats = await startNatsServer();
    h = await startIngest({ NATS_URL: nats.url }, { relay: true });
  });
  afterAll(async () => {
    await h.close();
    await nats.destroy();
  });

  it('keeps accepting posts, and publishes every event once NATS is back', async () => {
    const account = await factories.account(h.platform.db);
    const form = await factories.form(h.platform.db, account.id);
    const post = poster(h.url, form.slug);
    await nats.stop();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await post({ n: String(i) });
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }
    // Still in the outbox (the relay removes a row only with its publish's transaction).
    const events = await h.platform.db('outbox').whereRaw("payload->>'form_id' = ?", [form.id]).select('event_id');
    expect(events).toHaveLength(3);

    await nats.start();
    await eventually(async () => (await h.platform.db('outbox').whereIn('event_id', events.map((e) => e.event_id))).length === 0, { timeoutMs: 20_000, message: 'events published after NATS came back' });
    const seen = (await publishedEvents(h)).map((e) => e.msgId);
    for (const e of events) expect(seen.filter((id) => id === e.event_id)).toHaveLength(1);
  });
});

describe('POST /v1/f/:slug — Postgres down', () => {
  let pg: OwnServer;
  let platform: Platform;
  let server: Awaited<ReturnType<typeof listen>>;
  let filesDir: string;
  beforeAll(async () => {
    pg = await startPostgres();
    const config = testConfig({ DATABASE_URL: pg.url });
    filesDir = config.FILES_DIR;
    await ensureDatabase(config.DATABASE_URL);
    platform = await createPlatform(config, { service: 'test', logger: createLogger({ level: 'silent', service: 'test' }) });
    await migrate(platform.db);
    server = await listen(buildServiceApp(ingestService, platform).callback());
  }, 60_000);
  afterAll(async () => {
    await server.close();
    for (const stream of [platform.nats.names.eventsStream, platform.nats.names.deliveriesStream]) await platform.nats.jsm.streams.delete(stream).catch(() => undefined);
    await closePlatform(platform).catch(() => undefined);
    rmSync(platform.config.FILES_DIR, { recursive: true, force: true });
    await pg.destroy();
  });

  it('answers 503 as a problem document, and a request cut by the outage leaves no file behind (its transaction never commits)', async () => {
    const account = await factories.account(platform.db);
    const form = await factories.form(platform.db, account.id);
    expect((await poster(server.url, form.slug)({ a: '1' })).status).toBe(201);

    // A multipart post whose file is being stored when Postgres goes away.
    const answer = new Promise<{ status: number; body: string; type: string }>((resolve, reject) => {
      const req = http.request(`${server.url}/v1/f/${form.slug}`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b', 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }));
      });
      req.on('error', reject);
      req.write(`--b\r\ncontent-disposition: form-data; name="f"; filename="f.bin"\r\n\r\n`);
      req.write(randomBytes(64 * 1024));
      void eventually(() => localKeys(filesDir, account.id).length === 1, { message: 'file being stored' }).then(() => {
        void pg.stop();
        req.end(`\r\n--b--\r\n`);
      });
    });
    const res = await answer;
    expect(res.status).toBe(503);
    expect(res.type).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(res.body).type).toMatch(/\/service-unavailable$/);
    expect(localKeys(filesDir, account.id)).toEqual([]);

    const later = await poster(server.url, form.slug)({ a: '2' });
    expect([later.status, slugOf(later)]).toEqual([503, 'service-unavailable']);
    expect(later.headers.get('access-control-allow-origin')).toBe('*');
  }, 30_000);
});

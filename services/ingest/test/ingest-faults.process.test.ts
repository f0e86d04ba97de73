import { rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { ensureDatabase, createLogger } from '@intake/shared/base';
import { migrate } from '@intake/shared/schema';
import { buildServiceApp, createPlatform, closePlatform, type Platform } from '@intake/shared/runtime';
import {
  eventually,
  factories,
  listen,
  startNatsServer,
  startPostgres,
  testConfig,
  testDatabaseUrl,
  type OwnServer,
  registerOpenApi,
} from '@intake/shared/testing';
import { openApi } from '@intake/management';
import { createIngestService } from '../src';
import { poster, publishedEvents, slugOf, startIngest, submissionsOf, type IngestHarness } from './helpers';
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
    await eventually(
      async () =>
        (
          await h.platform.db('outbox').whereIn(
            'event_id',
            events.map((e) => e.event_id),
          )
        ).length === 0,
      { timeoutMs: 20_000, message: 'events published after NATS came back' },
    );
    const seen = (await publishedEvents(h)).map((e) => e.msgId);
    for (const e of events) expect(seen.filter((id) => id === e.event_id)).toHaveLength(1);
  });
});

describe('POST /v1/f/:slug — Postgres down', () => {
  let pg: OwnServer;
  let platform: Platform;
  const ingest = createIngestService();
  let server: Awaited<ReturnType<typeof listen>>;
  let filesDir: string;
  beforeAll(async () => {
    pg = await startPostgres();
    const config = testConfig({ DATABASE_URL: pg.url });
    filesDir = config.FILES_DIR;
    await ensureDatabase(config.DATABASE_URL);
    platform = await createPlatform(config, {
      service: 'test',
      logger: createLogger({ level: 'silent', service: 'test' }),
    });
    await migrate(platform.db);
    server = await listen(buildServiceApp(ingest, platform).callback());
    registerOpenApi(server.url, openApi(platform));
  });
  afterAll(async () => {
    await server.close();
    for (const stream of [platform.nats.names.eventsStream, platform.nats.names.deliveriesStream])
      await platform.nats.jsm.streams.delete(stream).catch(() => undefined);
    await closePlatform(platform).catch(() => undefined);
    rmSync(platform.config.FILES_DIR, { recursive: true, force: true });
    await pg.destroy();
  });

  it('answers 503 as a problem; a request cut by the outage leaves no file once Postgres can tell it was not stored', async () => {
    const account = await factories.account(platform.db);
    const form = await factories.form(platform.db, account.id);
    expect((await poster(server.url, form.slug)({ a: '1' })).status).toBe(201);

    // A multipart post whose file is being stored when Postgres goes away.
    const answer = new Promise<{ status: number; body: string; type: string }>((resolve, reject) => {
      const req = http.request(
        `${server.url}/v1/f/${form.slug}`,
        {
          method: 'POST',
          headers: { 'content-type': 'multipart/form-data; boundary=b', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }),
          );
        },
      );
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

    const later = await poster(server.url, form.slug)({ a: '2' });
    expect([later.status, slugOf(later)]).toEqual([503, 'service-unavailable']);
    expect(later.headers.get('access-control-allow-origin')).toBe('*');

    // Refused before its statement reached Postgres, the file is gone now; cut while its statement
    // may have been under way, it waits for Postgres to say whether the submission was stored.
    const unsettled = ingest.deps(platform).unsettled;
    if (unsettled.size > 0) {
      expect(localKeys(filesDir, account.id)).toHaveLength(1);
      await unsettled.settle(0); // Postgres is still down: nothing can be decided
      expect(localKeys(filesDir, account.id)).toHaveLength(1);
      await pg.start();
      await unsettled.settle(0);
    }
    expect(unsettled.size).toBe(0);
    expect(localKeys(filesDir, account.id)).toEqual([]);
  });
});

/**
 * A TCP proxy to Postgres that, once armed, passes on the client's next message holding `marker`
 * and then drops the client's side: Postgres still runs (and commits) the statement, the client
 * never hears the answer.
 */
async function cuttingProxy(target: URL) {
  let armed: string | undefined;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    let cut = false;
    client.on('data', (chunk) => {
      upstream.write(chunk);
      if (armed !== undefined && chunk.includes(armed)) {
        armed = undefined;
        cut = true;
        client.destroy();
      }
    });
    // After the cut, Postgres's answer (it has committed by then) ends the server side too.
    upstream.on('data', (chunk) => (cut ? upstream.end() : client.write(chunk)));
    client.on('close', () => cut || upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  const { port } = await new Promise<net.AddressInfo>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(server.address() as net.AddressInfo)),
  );
  const url = new URL(target);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString(),
    cutAfter: (marker: string) => void (armed = marker),
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), undefined)),
  };
}

describe('POST /v1/f/:slug — connection lost while storing', () => {
  let proxy: Awaited<ReturnType<typeof cuttingProxy>>;
  let h: IngestHarness;
  beforeAll(async () => {
    proxy = await cuttingProxy(new URL(testDatabaseUrl()));
    h = await startIngest({ DATABASE_URL: proxy.url });
  });
  afterAll(async () => {
    await h.close();
    await proxy.close();
  });

  it('keeps the files of a post whose store call lost its connection after Postgres committed it (answered 503)', async () => {
    const account = await factories.account(h.platform.db, { plan: 'pro' });
    const form = await factories.form(h.platform.db, account.id);
    const body = new FormData();
    body.append('name', 'Ada');
    body.append('file', new Blob(['hello']), 'a.txt');
    proxy.cutAfter('ingest_store_submissions');
    const res = await poster(h.url, form.slug)(body);
    expect([res.status, slugOf(res)]).toEqual([503, 'service-unavailable']);
    // The submission was stored after all, so its file must still be there.
    const [submission] = await eventually(async () =>
      (await submissionsOf(h, form.id)).length === 1 ? submissionsOf(h, form.id) : undefined,
    );
    const files = await h.platform.db('submission_files').where({ submission_id: submission.id });
    expect(files).toHaveLength(1);
    expect(localKeys(h.platform.config.FILES_DIR, account.id)).toEqual([files[0].storage_key]);
    // Once Postgres can tell, the files of a stored submission stay.
    await h.deps.unsettled.settle(0);
    expect(h.deps.unsettled.size).toBe(0);
    expect(localKeys(h.platform.config.FILES_DIR, account.id)).toEqual([files[0].storage_key]);
  });

  it('deletes the files of a post whose store call lost its connection and failed, once the process that ran it is gone', async () => {
    const account = await factories.account(h.platform.db, { plan: 'pro' });
    const form = await factories.form(h.platform.db, account.id);
    const body = new FormData();
    body.append('file', new Blob(['hello']), 'a.txt');
    // The form's row held as a deletion would hold it: the call waits for it, then fails on lock_timeout.
    const deleting = await h.platform.db.transaction();
    try {
      await deleting('forms').where({ id: form.id }).forUpdate().select('id');
      proxy.cutAfter('ingest_store_submissions');
      const res = await poster(h.url, form.slug)(body);
      expect([res.status, slugOf(res)]).toEqual([503, 'service-unavailable']);
      const unsettled = h.deps.unsettled;
      expect(unsettled.size).toBe(1);
      // Its server process is still waiting for the lock: nothing can be decided, the file stays.
      await unsettled.settle(0);
      expect([unsettled.size, localKeys(h.platform.config.FILES_DIR, account.id)]).toEqual([
        1,
        [expect.stringMatching(/\/fil_/)],
      ]);
      const settled = async () => {
        await unsettled.settle(0);
        return unsettled.size === 0;
      };
      await eventually(settled, {
        timeoutMs: 15_000,
        intervalMs: 250,
        message: 'settled once the server process gave up',
      });
    } finally {
      await deleting.rollback();
    }
    expect(await submissionsOf(h, form.id)).toEqual([]);
    expect(localKeys(h.platform.config.FILES_DIR, account.id)).toEqual([]);
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { eventually, listen, startNatsServer, type OwnServer } from '@intake/shared/testing';
import { createAccountKey, managementApi } from './all-in-one';

/**
 * `npm start` before NATS is up, as a newcomer runs it: the process listens and is ready on Postgres alone, says once
 * that it waits for NATS, accepts posts into the outbox, and delivers them once NATS comes.
 */
describe('all-in-one process started before NATS', () => {
  const database = `intake_nonats_${randomBytes(4).toString('hex')}`;
  const databaseUrl = `postgres://postgres@127.0.0.1:5432/${database}`;
  let nats: OwnServer;
  let child: ChildProcess;
  let output = '';
  let url = '';

  beforeAll(async () => {
    // A NATS of its own, stopped before the process starts: its address answers nothing until the test starts it.
    nats = await startNatsServer();
    await nats.stop();
    child = spawn(process.execPath, [path.resolve(__dirname, '../dist/all-in-one.js')], {
      env: {
        ...process.env,
        PORT: '0',
        DATABASE_URL: databaseUrl,
        NATS_URL: nats.url,
        NATS_PREFIX: `t${randomBytes(4).toString('hex')}`,
        LOG_LEVEL: 'info',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    url = await eventually(() => /listening on (http:\/\/localhost:\d+)/.exec(output)?.[1], {
      timeoutMs: 30_000,
      message: 'the ready line without NATS',
    });
  }, 45_000);

  afterAll(async () => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
    await nats.destroy();
    const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await client.end();
  });

  it('listens and is ready on Postgres alone, saying once that it waits for NATS and what waits', async () => {
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ok', workers: 'waiting for NATS' });
    const waits = await eventually(() => output.split('\n').filter((l) => l.includes('waiting for NATS (NATS_URL)')), {
      message: 'the line saying it waits for NATS',
    });
    expect(waits).toHaveLength(1);
    expect(waits[0]).toContain(nats.url);
    expect(output.split('\n').filter((l) => l.includes('Intake is ready'))).toHaveLength(1);
  });

  it('accepts a post meanwhile and delivers it to the webhook once NATS answers', async () => {
    const { received, ...receiver } = await startReceiver();
    try {
      const api = managementApi(url, createAccountKey(databaseUrl));
      const form = await api('POST', '/v1/forms', { name: 'Contact' });
      expect(form.status).toBe(201);
      const hook = await api('POST', `/v1/forms/${form.body['id']}/webhooks`, { url: `${receiver.url}/hook` });
      expect(hook.status).toBe(201);
      const post = await fetch(`${url}/v1/f/${form.body['slug']}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: 'name=Ada&message=Hello',
      });
      expect(post.status).toBe(201);
      const { id } = (await post.json()) as { id: string };
      expect(received).toEqual([]);

      await nats.start();
      await eventually(() => received.length > 0, { timeoutMs: 30_000, message: 'the webhook after NATS came' });
      expect(received).toEqual([id]);
      // The threads deliver as soon as they run; the main thread says so once both have started.
      await eventually(() => output.includes('NATS answered: workers started'), { message: 'the started line' });
      expect(await (await fetch(`${url}/readyz`)).json()).toMatchObject({ status: 'ok', workers: 'started' });
    } finally {
      await receiver.close();
    }
  }, 60_000);
});

/** A webhook receiver on loopback that records the submission id of each delivery. */
async function startReceiver() {
  const received: string[] = [];
  const server = await listen((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push((JSON.parse(body) as { data: { submission_id: string } }).data.submission_id);
      res.end();
    });
  });
  return { url: server.url, received, close: () => server.close() };
}

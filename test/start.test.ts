import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { eventually, listen, startupBudgetMs } from '@intake/shared/testing';
import { createAccountKey, managementApi } from './all-in-one';

/**
 * `npm start`'s process: one port, routed like the ingress, creates its database, answers HTTP on its
 * main thread while the relay and the consumers run on a background thread, drains on SIGTERM.
 */
/** Starts the built all-in-one process on its own database for the whole file, and drops that database after. */
function useAllInOneProcess() {
  const app = {
    database: `intake_start_${randomBytes(4).toString('hex')}`,
    child: undefined as unknown as ChildProcess,
    output: '',
    url: '',
  };

  beforeAll(async () => {
    app.child = spawn(process.execPath, [path.resolve(__dirname, '../dist/all-in-one.js')], {
      env: {
        ...process.env,
        PORT: '0',
        DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${app.database}`,
        NATS_PREFIX: `t${randomBytes(4).toString('hex')}`,
        LOG_LEVEL: 'info',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    app.child.stdout?.on('data', (d) => (app.output += d));
    app.child.stderr?.on('data', (d) => (app.output += d));
    app.url = await eventually(() => /listening on (http:\/\/localhost:\d+)/.exec(app.output)?.[1], {
      timeoutMs: startupBudgetMs(),
      message: 'the ready line',
    });
  });

  afterAll(async () => {
    if (app.child.exitCode === null) app.child.kill('SIGKILL');
    const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${app.database} WITH (FORCE)`);
    await client.end();
  });

  return app;
}

describe('all-in-one process', () => {
  const app = useAllInOneProcess();

  it('logs one ready line with the URL', () => {
    expect(app.output.split('\n').filter((l) => l.includes('Intake is ready'))).toHaveLength(1);
  });

  it('created and migrated its database and answers /v1/health with the state of each dependency', async () => {
    // Ready on Postgres alone: NATS and the streams join in the background, so health turns 200 once they have.
    const res = await eventually(
      async () => {
        const answer = await fetch(`${app.url}/v1/health`);
        return answer.status === 200 ? answer : undefined;
      },
      { message: '/v1/health answering 200' },
    );
    expect(await res.json()).toMatchObject({
      status: 'ok',
      // No REDIS_URL: no Redis, each process rate-limits alone.
      checks: { postgres: 'ok', nats: 'ok', redis: 'unused', streams: 'ok' },
      // One NATS server: each stream has one replica, which is its quorum.
      streams: [
        expect.objectContaining({ replicas: 1, current: 1, quorum: true }),
        expect.objectContaining({ replicas: 1, current: 1, quorum: true }),
      ],
    });
  });

  it('answers liveness and readiness probes', async () => {
    expect((await fetch(`${app.url}/livez`)).status).toBe(200);
    const ready = await fetch(`${app.url}/readyz`);
    expect(ready.status).toBe(200);
  });

  it('routes paths as the ingress does', async () => {
    const mgmt = await fetch(`${app.url}/v1/api-keys`);
    expect(mgmt.status).toBe(401);
    const openapi = await fetch(`${app.url}/openapi`);
    expect(((await openapi.json()) as { openapi: string }).openapi).toBe('3.1.0');
    const ingest = await fetch(`${app.url}/v1/f/no-such-form`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(ingest.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('takes a post all the way: stored, counted by the usage consumer, sent to the webhook', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const api = managementApi(app.url, createAccountKey(`postgres://postgres@127.0.0.1:5432/${app.database}`));
      const form = await api('POST', '/v1/forms', { name: 'Contact' });
      expect(form.status).toBe(201);
      expect((await api('POST', `/v1/forms/${form.body.id}/webhooks`, { url: `${receiver.url}/hook` })).status).toBe(
        201,
      );

      const post = await fetch(`${app.url}/v1/f/${form.body.slug}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: 'name=Ada&message=Hello',
      });
      expect(post.status).toBe(201);
      const { id } = (await post.json()) as { id: string };

      // The relay and consumers start on their threads once NATS answers, after the ready line: on a loaded machine
      // that is a start-up, waited for on the start-up budget.
      await eventually(() => receiver.received.length > 0, { timeoutMs: startupBudgetMs(), message: 'the webhook' });
      expect(receiver.received.map((r) => [r.body.type, r.body.data.submission_id])).toEqual([
        ['submission.created', id],
      ]);
      const usage = await eventually(
        async () => {
          const report = (await api('GET', '/v1/usage')).body as { forms: { form_id: string; received: number }[] };
          return report.forms.find((f) => f.form_id === form.body.id && f.received === 1);
        },
        { timeoutMs: startupBudgetMs(), message: 'the post counted by the usage consumer' },
      );
      expect(usage).toMatchObject({ received: 1 });
      // Delivery's consumers ran on the background thread and usage's on the bookkeeping thread, each with a pool of its own.
      expect(await applicationNames(app.database)).toEqual(
        expect.arrayContaining(['intake-all-in-one-background', 'intake-all-in-one-bookkeeping']),
      );
    } finally {
      await receiver.close();
    }
  });

  it('drains and exits 0 on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => app.child.once('exit', (code) => resolve(code)));
    app.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(app.output).toMatch(/draining/);
  });
});

type Delivery = { id: string; body: { type: string; data: { submission_id: string } } };

/** A local webhook receiver that records each delivery's id and body. */
async function startWebhookReceiver() {
  const received: Delivery[] = [];
  const server = await listen((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ id: String(req.headers['webhook-id']), body: JSON.parse(body) });
      res.end();
    });
  });
  return { url: server.url, received, close: () => server.close() };
}

/** The application names of the process's connections to its database, one per pool. */
async function applicationNames(database: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:5432/${database}` });
  await client.connect();
  const { rows } = await client.query<{ application_name: string }>(
    `SELECT DISTINCT application_name FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'intake-%'`,
    [database],
  );
  await client.end();
  return rows.map((r) => r.application_name);
}

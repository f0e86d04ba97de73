import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { eventually, startupBudgetMs } from '@intake/shared/testing';
import { databaseUrl, formWithWebhook, spawnAllInOne, startWebhookReceiver, stopAllInOne } from './all-in-one';

/**
 * `npm start`'s process: one port, routed like the ingress, creates its database, answers HTTP on its
 * main thread while the relay and the consumers run on a background thread, drains on SIGTERM.
 */
/** Starts the built all-in-one process on its own database for the whole file, and drops that database after. */
function useAllInOneProcess() {
  const database = `intake_start_${randomBytes(4).toString('hex')}`;
  let started: ReturnType<typeof spawnAllInOne> | undefined;
  const app = {
    database,
    url: '',
    get child(): ChildProcess {
      if (!started) throw new Error('the all-in-one process has not been started');
      return started.child;
    },
    get output(): string {
      return started?.output() ?? '';
    },
  };
  beforeAll(async () => {
    started = spawnAllInOne(database);
    app.url = await started.url;
  });
  afterAll(() => stopAllInOne(started?.child, database));
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
    expect(await res.json()).toEqual({
      status: 'ok',
      // No REDIS_URL: no Redis, each process rate-limits alone. One NATS server: each stream's one replica is its
      // quorum (which streams and their replicas: the metrics, never this public answer).
      checks: { postgres: 'ok', nats: 'ok', redis: 'unused', streams: 'ok' },
      time: expect.any(String),
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
      const { api, formId, post: postForm } = await formWithWebhook(app.url, app.database, receiver.url);
      const post = await postForm('name=Ada&message=Hello');
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
          return report.forms.find((f) => f.form_id === formId && f.received === 1);
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

/** The application names of the process's connections to its database, one per pool. */
async function applicationNames(database: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl(database) });
  await client.connect();
  const { rows } = await client.query<{ application_name: string }>(
    `SELECT DISTINCT application_name FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'intake-%'`,
    [database],
  );
  await client.end();
  return rows.map((r) => r.application_name);
}

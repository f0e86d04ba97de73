import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { eventually } from '@intake/shared/testing';

/** `npm start`'s process: one port, routed like the ingress, creates its database, drains on SIGTERM. */
describe('all-in-one process', () => {
  const database = `intake_start_${randomBytes(4).toString('hex')}`;
  let child: ChildProcess;
  let output = '';
  let url = '';

  beforeAll(async () => {
    child = spawn(process.execPath, [path.resolve(__dirname, '../dist/all-in-one.js')], {
      env: {
        ...process.env,
        PORT: '0',
        DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${database}`,
        NATS_PREFIX: `t${randomBytes(4).toString('hex')}`,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    url = await eventually(() => /listening on (http:\/\/localhost:\d+)/.exec(output)?.[1], {
      timeoutMs: 20_000,
      message: 'the ready line',
    });
  }, 30_000);

  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await client.end();
  });

  it('logs one ready line with the URL', () => {
    expect(output.split('\n').filter((l) => l.includes('Intake is ready'))).toHaveLength(1);
  });

  it('created and migrated its database and answers /v1/health with the state of each dependency', async () => {
    const res = await fetch(`${url}/v1/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', checks: { postgres: 'ok', nats: 'ok', redis: 'ok' } });
  });

  it('answers liveness and readiness probes', async () => {
    expect((await fetch(`${url}/livez`)).status).toBe(200);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
  });

  it('routes paths as the ingress does', async () => {
    const mgmt = await fetch(`${url}/v1/api-keys`);
    expect(mgmt.status).toBe(401);
    const openapi = await fetch(`${url}/openapi`);
    expect(((await openapi.json()) as { openapi: string }).openapi).toBe('3.1.0');
    const ingest = await fetch(`${url}/v1/f/no-such-form`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(ingest.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('drains and exits 0 on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toMatch(/draining/);
  });
});

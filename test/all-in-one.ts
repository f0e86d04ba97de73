import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { eventually, listen, startupBudgetMs } from '@intake/shared/testing';

/** What the tests of the built all-in-one (`npm start`'s process) share. */

/** Creates an account with the operator CLI on the database at `databaseUrl` and returns its management key. */
export function createAccountKey(databaseUrl: string): string {
  const admin = spawnSync(
    process.execPath,
    [path.resolve(__dirname, '../services/management/dist/cli/admin.js'), 'accounts', 'create', '--plan', 'team'],
    { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8' },
  );
  return (JSON.parse(admin.stdout) as { management_key: string }).management_key;
}

/** Calls the management API with a key and returns the status and JSON body. */
export function managementApi(url: string, key: string) {
  return async (method: string, apiPath: string, body?: unknown) => {
    const res = await fetch(`${url}${apiPath}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
}

/** The address of database `name` on the machine's Postgres. */
export const databaseUrl = (name: string) => `postgres://postgres@127.0.0.1:5432/${name}`;

/**
 * Spawns the built all-in-one on database `database` (the process creates it), with `env` added, in a process group of
 * its own (`stopAllInOne` ends the group). `output()` is what it has logged so far; `url` resolves once it listens.
 */
export function spawnAllInOne(database: string, env: Record<string, string> = {}, timeoutMs = startupBudgetMs()) {
  let output = '';
  const child = spawn(process.execPath, [path.resolve(__dirname, '../dist/all-in-one.js')], {
    env: {
      ...process.env,
      PORT: '0',
      DATABASE_URL: databaseUrl(database),
      NATS_PREFIX: `t${randomBytes(4).toString('hex')}`,
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const url = eventually(() => /listening on (http:\/\/localhost:\d+)/.exec(output)?.[1], {
    timeoutMs,
    message: 'the ready line',
  });
  return { child, url, output: () => output };
}

/** Kills a spawned all-in-one's process group if it still runs, and drops its database. */
export async function stopAllInOne(child: ChildProcess | undefined, database: string): Promise<void> {
  if (child?.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
  const client = new pg.Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await client.end();
}

export type Delivery = { id: string; body: { type: string; data: { submission_id: string } } };

/** A local webhook receiver that records each delivery's id (`webhook-id`) and body. */
export async function startWebhookReceiver() {
  const received: Delivery[] = [];
  const server = await listen((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ id: String(req.headers['webhook-id']), body: JSON.parse(body) });
      res.end();
    });
  });
  return { url: `${server.url}/hook`, received, close: () => server.close() };
}

/**
 * Through the management API of the all-in-one at `url` (a new account of its database `database`): a form whose
 * webhook goes to `hookUrl`; `post(body)` posts a urlencoded `body` to it as a page does.
 */
export async function formWithWebhook(url: string, database: string, hookUrl: string) {
  const api = managementApi(url, createAccountKey(databaseUrl(database)));
  const form = await api('POST', '/v1/forms', { name: 'Contact' });
  expect(form.status).toBe(201);
  expect((await api('POST', `/v1/forms/${String(form.body['id'])}/webhooks`, { url: hookUrl })).status).toBe(201);
  const post = (body: string) =>
    fetch(`${url}/v1/f/${String(form.body['slug'])}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
    });
  return { api, formId: String(form.body['id']), post };
}

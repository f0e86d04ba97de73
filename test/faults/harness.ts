import type { Socket } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '@intake/shared/base';
import type { Platform } from '@intake/shared/runtime';
import {
  createTestPlatform,
  eventually,
  factories,
  freePort,
  listen,
  ProcessEnded,
  startupBudgetMs,
  type ConfigOverrides,
  type OwnServer,
  type TestPlatform,
} from '@intake/shared/testing';

const ROOT = path.resolve(__dirname, '../..');

export type ServiceName = 'ingest' | 'management' | 'delivery' | 'usage';

/** A real service process (`node services/<name>/dist/main.js`, built by `npm test`'s build step). */
export interface ServiceProcess {
  name: ServiceName;
  url: string;
  child: ChildProcess;
  /** Kills it with `signal` (SIGTERM by default) and waits until it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const SECURITY = [
  'DATABASE_CA_FILE',
  'REDIS_CA_FILE',
  'NATS_USER',
  'NATS_PASSWORD',
  'NATS_TOKEN',
  'NATS_CREDS_FILE',
  'NATS_NKEY_SEED_FILE',
  'NATS_TLS_CA_FILE',
  'NATS_TLS_CERT_FILE',
  'NATS_TLS_KEY_FILE',
] as const;

/** Settings every fault test gives its processes: short retry ladder and time-outs, no rate limit in the way. */
export function processEnv(config: Config, env: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: config.DATABASE_URL,
    NATS_URL: config.NATS_URL,
    NATS_PREFIX: config.NATS_PREFIX,
    REDIS_URL: config.REDIS_URL ?? '',
    SECRETS_KEY: config.SECRETS_KEY,
    FILES_DIR: config.FILES_DIR,
    GOOGLE_OAUTH_TOKEN_URL: config.GOOGLE_OAUTH_TOKEN_URL,
    GOOGLE_SHEETS_API_URL: config.GOOGLE_SHEETS_API_URL,
    AIRTABLE_API_URL: config.AIRTABLE_API_URL,
    NOTION_API_URL: config.NOTION_API_URL,
    // The platform's NATS credentials and TLS files, when it has them.
    ...Object.fromEntries(SECURITY.flatMap((key) => (config[key] === undefined ? [] : [[key, String(config[key])]]))),
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,500ms,1s,2s',
    WEBHOOK_TIMEOUT_MS: '1500',
    RATE_LIMIT_POINTS: '1000000',
    LOG_LEVEL: 'error',
    ...env,
  };
}

/**
 * Starts one service process on a free port and waits (the start-up budget, startupBudgetMs, unless `timeoutMs`) until `/livez` answers (what it
 * writes is kept in `output` when given, else its standard output is dropped); with
 * `ready: true`, until `/readyz` answers 200 and its workers run (they start once NATS answers; `workers: false` waits
 * for readiness alone, as when NATS is down on purpose).
 */
export async function startService(
  name: ServiceName,
  env: Record<string, string>,
  options: { ready?: boolean; workers?: boolean; timeoutMs?: number; output?: string[] } = {},
): Promise<ServiceProcess> {
  const main = path.join(ROOT, 'services', name, 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run npx tsc -b first`);
  const port = await freePort();

  const child = spawn(process.execPath, [main], {
    env: { ...process.env, OTEL_SDK_DISABLED: 'true', ...env, PORT: String(port) },
    stdio: ['ignore', options.output ? 'pipe' : 'ignore', options.output ? 'pipe' : 'inherit'],
  });
  // What it writes, when the caller keeps it (its log, for a test that reads it).
  for (const stream of options.output ? [child.stdout, child.stderr] : [])
    stream?.on('data', (chunk: Buffer) => options.output!.push(chunk.toString('utf8')));
  const url = `http://127.0.0.1:${port}`;
  const probe = options.ready ? '/readyz' : '/livez';
  // One that does not come up in time is not left running (it would keep Jest from exiting).
  await eventually(
    async () => {
      // Ended on its own, or killed (by the test environment once a hook gave up on it): no more waiting.
      if (child.exitCode !== null || child.signalCode !== null)
        throw new ProcessEnded(`${name} exited with ${child.exitCode ?? child.signalCode}`);
      const res = await fetch(`${url}${probe}`);
      if (res.status !== 200) return false;
      if (!options.ready || options.workers === false) return true;
      return ((await res.json()) as { workers?: string }).workers === 'started';
    },
    {
      timeoutMs: options.timeoutMs ?? startupBudgetMs(),
      intervalMs: 50,
      message: `${name} process to answer ${probe}`,
      stopOn: (err) => err instanceof ProcessEnded,
    },
  ).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    name,
    url,
    child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
  };
}

export async function stopAll(processes: ServiceProcess[]): Promise<void> {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
}

/** A fault test's set-up: a real platform before all, and at the end every process it started stopped and the platform closed. */
export function faultSuite(): { platform: TestPlatform; processes: ServiceProcess[] } {
  const suite = { platform: undefined as unknown as TestPlatform, processes: [] as ServiceProcess[] };
  beforeAll(async () => {
    suite.platform = await createTestPlatform();
    // Events other test files of this checkout stored without a relay would be published by this
    // test's processes and fanned out to their (dead) webhooks alongside the test's own load; so would the
    // deliveries they left waiting, by this test's parking pump and reconciler: they end here.
    await suite.platform.db('outbox').delete();
    await suite.platform.db('delivery_parking').delete();
    await suite.platform
      .db('deliveries')
      .whereIn('status', ['pending', 'retrying'])
      .update({ status: 'failed', last_error: 'left waiting by another test file' });
  });
  // Each step on its own: a set-up that failed half-way (no platform yet) still stops what it started.
  afterAll(async () => {
    await stopAll(suite.processes);
    await suite.platform?.close();
  });
  return suite;
}

/**
 * faultSuite around a server of our own (`start`) that the platform is configured to use (`use`): the test stops and
 * starts it through `server`; at the end it is started again if it was left stopped, the platform closed, and it is
 * destroyed.
 */
export function faultSuiteWithServer(
  start: () => Promise<OwnServer>,
  use: (url: string) => ConfigOverrides,
): { platform: TestPlatform; processes: ServiceProcess[]; server: OwnServer } {
  const suite = {
    platform: undefined as unknown as TestPlatform,
    processes: [] as ServiceProcess[],
    server: undefined as unknown as OwnServer,
  };
  let own: OwnServer;
  let down = false;
  beforeAll(async () => {
    own = await start();
    suite.server = {
      ...own,
      async stop() {
        await own.stop();
        down = true;
      },
      async start() {
        await own.start();
        down = false;
      },
    };
    suite.platform = await createTestPlatform(use(own.url));
  });
  // Each step on its own: a set-up that failed half-way (no server, or no platform yet) still stops what it started.
  afterAll(async () => {
    try {
      await stopAll(suite.processes);
      if (down) await own.start();
      await suite.platform?.close();
    } finally {
      await own?.destroy();
    }
  });
  return suite;
}

export interface Envelope {
  id: string;
  type: string;
  data: { submission_id: string };
}

/**
 * A real webhook receiver on loopback: records every envelope it is sent, and the connection it came on; answers 200
 * after `delayMs`.
 */
export async function receiver(options: { delayMs?: number } = {}) {
  const envelopes: Envelope[] = [];
  const connections: Socket[] = [];
  const server = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      envelopes.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Envelope);
      connections.push(req.socket);
      const answer = () => res.end('ok');
      if (options.delayMs) setTimeout(answer, options.delayMs);
      else answer();
    });
  });
  return {
    ...server,
    envelopes,
    /** Distinct envelope ids received (at-least-once: duplicates share the id). */
    distinctIds: () => new Set(envelopes.map((e) => e.id)),
    /** The connections requests came on so far (to tell, later, what a process killed now had sent). */
    connectionsSoFar: () => new Set(connections),
    /**
     * The envelope ids that came on these connections, whenever they were read: a request a killed process had sent
     * may be read a moment after its process died.
     */
    idsOn: (on: Set<Socket>) => new Set(envelopes.filter((_, i) => on.has(connections[i]!)).map((e) => e.id)),
    submissionIds: () => new Set(envelopes.map((e) => e.data.submission_id)),
  };
}

/** A webhook receiver (see `receiver`), a form with a webhook to it, and the environment for service processes. */
export async function formWithReceiver(platform: TestPlatform, options: { delayMs?: number } = {}) {
  const target = await receiver(options);
  try {
    return { target, ...(await formWithWebhook(platform, target.url)), env: processEnv(platform.config) };
  } catch (err) {
    await target.close();
    throw err;
  }
}

/** How many deliveries of the form are recorded as succeeded. */
export async function succeededDeliveries(platform: Pick<Platform, 'db'>, formId: string): Promise<number> {
  const row = await platform.db('deliveries').where({ form_id: formId, status: 'succeeded' }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** An account with one live form and one enabled webhook to `url`. */
export async function formWithWebhook(
  platform: Pick<Platform, 'db' | 'secrets'>,
  url?: string,
): Promise<{ accountId: string; formId: string; slug: string }> {
  const account = await factories.account(platform.db, { plan: 'team', quota: 100_000_000 });
  const form = await factories.form(platform.db, account.id);
  if (url) {
    await factories.webhook(platform, { accountId: account.id, formId: form.id, url });
  }
  return { accountId: account.id, formId: form.id, slug: form.slug };
}

export interface PostAnswer {
  status: number;
  id?: string;
  type?: string;
  contentType: string;
}

/** One urlencoded post to ingest. Network errors are answers too (status 0). */
export async function post(
  ingestUrl: string,
  slug: string,
  fields: Record<string, string> = { name: 'Ada', message: 'hello' },
  headers: Record<string, string> = {},
): Promise<PostAnswer> {
  try {
    const res = await fetch(`${ingestUrl}/v1/f/${slug}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
    const body = (await res.json().catch(() => ({}))) as { id?: string; type?: string };
    return { status: res.status, id: body.id, type: body.type, contentType: res.headers.get('content-type') ?? '' };
  } catch {
    return { status: 0, contentType: '' };
  }
}

/** Runs `count` jobs with at most `concurrency` at once. */
export async function pool<T>(count: number, concurrency: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await job(i);
      }
    }),
  );
  return results;
}

/** Posts continuously (with `concurrency` in flight) until `stop()` is called; every answer is kept. */
export function steadyPoster(ingestUrl: string, slug: string, concurrency = 2) {
  const answers: PostAnswer[] = [];
  let running = true;
  const loops = Array.from({ length: concurrency }, async () => {
    while (running) answers.push(await post(ingestUrl, slug, { name: 'steady', n: String(answers.length) }));
  });
  return {
    answers,
    accepted: () => answers.filter((a) => a.status === 201).length,
    async stop() {
      running = false;
      await Promise.all(loops);
      return answers;
    },
  };
}

/** Every file under a directory (the local blob store), recursively. */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Counts by status, e.g. `{ 201: 120, 503: 4 }`, for the one-line summaries. */
export function tally(statuses: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}

import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { loadConfig, type Config } from '../base/config';
import { createDb, ensureDatabase, type Db } from '../base/db';
import { migrate, UnknownMigrationsError } from '../schema/migrate';
import { createLogger } from '../base/logger';
import { createPlatform, closePlatform, type Platform } from '../runtime/platform';
import { type Clock } from '../contracts/time';
import { newId } from '../contracts/ids';
import type { ChallengeProvider, FormStatus } from '../contracts/forms';
import { generateKey, type KeyType } from '../auth/api-keys';
import { storeTestSubmission } from './submissions';
import { webhookFactories } from './webhooks';

/**
 * One database per Jest worker (and per checkout, so two working copies never share one; and per
 * `INTAKE_TEST_DB_TAG`, so two Jest runs at once in one checkout do not either), created and
 * migrated once per worker process; dropped at the start of every Jest run (scripts/jest-fresh-databases.js, which
 * names them the same way).
 */
export function testDatabaseUrl(): string {
  const checkout = createHash('sha256').update(path.resolve(__dirname, '../../..')).digest('hex').slice(0, 8);
  const tag = (process.env['INTAKE_TEST_DB_TAG'] ?? '')
    .replace(/[^a-z0-9]/gi, '')
    .slice(0, 16)
    .toLowerCase();
  return `postgres://postgres@127.0.0.1:5432/intake_test_${checkout}${tag ? `_${tag}` : ''}_${process.env['JEST_WORKER_ID'] ?? '0'}`;
}

/** The databases this process has made ready, by URL. */
const migrated = new Map<string, Promise<void>>();

export async function migratedTestDatabase(url = testDatabaseUrl()): Promise<void> {
  const ready = migrated.get(url);
  if (ready) return ready;
  const migrating = (async () => {
    await ensureDatabase(url);
    const db = createDb(url, { poolMax: 2, waitMs: defaultWaitMs() });
    try {
      await migrate(db);
    } catch (err) {
      // A test database left by a checkout with other migrations: start it afresh.
      if (!(err instanceof UnknownMigrationsError)) throw err;
      await db.destroy();
      await recreateDatabase(url);
      const fresh = createDb(url, { poolMax: 2, waitMs: defaultWaitMs() });
      await migrate(fresh).finally(() => fresh.destroy());
      return;
    }
    await db.destroy();
  })();
  migrated.set(url, migrating);
  return migrating;
}

/**
 * A database of its own for a test that needs an install with nothing in it (the worker's database holds what every
 * test before it made), dropped first so it is empty; `createTestPlatform({ DATABASE_URL })` migrates it.
 */
export async function emptyTestDatabaseUrl(name: string): Promise<string> {
  const url = `${testDatabaseUrl()}_${name.replace(/[^a-z0-9]/g, '')}`;
  migrated.delete(url);
  await recreateDatabase(url);
  return url;
}

async function recreateDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  const name = admin.pathname.slice(1);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
  await ensureDatabase(url);
}

/** A unique NATS prefix, so streams and subjects of one test never meet another's. */
export function uniqueNatsPrefix(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

export type ConfigOverrides = Parameters<typeof loadConfig>[1];

export function testConfig(overrides: ConfigOverrides = {}): Config {
  return loadConfig(
    {},
    {
      DATABASE_URL: testDatabaseUrl(),
      NATS_PREFIX: uniqueNatsPrefix(),
      LOG_LEVEL: (process.env['TEST_LOG_LEVEL'] as 'silent' | undefined) ?? 'silent',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: true,
      SECRETS_KEY: 'test-secrets-key-0123456789abcdef',
      // The machine's Redis: tests exercise the shared rate limit (a test without Redis passes '').
      REDIS_URL: 'redis://127.0.0.1:6379',
      // The integrations' APIs are never the real ones in a test: a test that calls one points it at its stand-in.
      GOOGLE_OAUTH_TOKEN_URL: 'https://oauth2.googleapis.invalid/token',
      GOOGLE_SHEETS_API_URL: 'https://sheets.googleapis.invalid',
      AIRTABLE_API_URL: 'https://api.airtable.invalid',
      NOTION_API_URL: 'https://api.notion.invalid',
      ...overrides,
      // A directory of its own only when the test did not name one (a test's own is its to remove).
      FILES_DIR: overrides.FILES_DIR ?? mkdtempSync(path.join(tmpdir(), 'intake-files-')),
    },
  );
}

export interface TestPlatform extends Platform {
  close(): Promise<void>;
}

/** A real platform (Postgres, NATS, Redis of this machine) for one test file; close() removes its streams and files. */
export async function createTestPlatform(
  overrides: ConfigOverrides = {},
  options: { clock?: Clock } = {},
): Promise<TestPlatform> {
  const config = testConfig(overrides);
  await migratedTestDatabase(config.DATABASE_URL);
  const platform = await createPlatform(config, {
    service: 'test',
    clock: options.clock,
    logger: createLogger({ level: config.LOG_LEVEL, service: 'test' }),
    poolMax: 20,
    // A file's platform serves its tests' concurrent writes: on a loaded machine they wait their turn, not fail.
    dbWaitMs: defaultWaitMs(),
  });
  return {
    ...platform,
    async close() {
      for (const stream of [platform.nats.names.eventsStream, platform.nats.names.deliveriesStream]) {
        await platform.nats.jsm.streams.delete(stream).catch(() => undefined);
      }
      await closePlatform(platform);
      // Made by testConfig (even when files go to S3), unless the test named its own.
      if (overrides.FILES_DIR === undefined) rmSync(config.FILES_DIR, { recursive: true, force: true });
    },
  };
}

/** Serves a request handler (or a server of one's own, as `createHttpServer` makes) on a free loopback port. */
export async function listen(
  served: http.RequestListener | http.Server,
): Promise<{ url: string; port: number; server: http.Server; close(): Promise<void> }> {
  const server = typeof served === 'function' ? http.createServer(served) : served;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * How long a test waits for a process it starts to be ready before it fails: INTAKE_TEST_STARTUP_MS, 60 s unless set
 * (jest.config.js adds it to every test's time-out). A start-up on a loaded machine is slow, not broken: a test waits
 * for readiness, never for a fixed time, and never fails on a budget a busy box misses.
 */
export function startupBudgetMs(): number {
  const budget = Number(process.env['INTAKE_TEST_STARTUP_MS'] ?? 60_000);
  return Number.isFinite(budget) && budget > 0 ? budget : 60_000;
}

/**
 * How long `eventually` waits unless told: half the start-up budget (30 s by default). A condition that comes true
 * costs no more for it; one that never does fails a little later, and a loaded machine's slowness is not a failure.
 */
export function defaultWaitMs(): number {
  return Math.max(10_000, startupBudgetMs() / 2);
}

/** What `eventually` resolves with: the probe's value without its falsy members. */
export type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Polls `probe` until it returns a truthy value or the deadline passes (no fixed sleeps in tests). A `timeoutMs` shorter
 * than the default wait is raised to it: a wait says how long a slow-but-working machine may take at least, and a
 * loaded box (the suite beside another, or `stress-ng`) missed the 10–20 s ones tests used to state.
 */
export async function eventually<T>(
  probe: () => Promise<T> | T,
  options: {
    timeoutMs?: number;
    intervalMs?: number;
    message?: string;
    /** An error the probe throws that ends the wait at once (it will not come true), thrown as it is. */
    stopOn?: (err: unknown) => boolean;
  } = {},
): Promise<Truthy<T>> {
  const timeoutMs = Math.max(options.timeoutMs ?? 0, defaultWaitMs());
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as Truthy<T>;
    } catch (err) {
      if (options.stopOn?.(err)) throw err;
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `${options.message ?? 'condition not met'} within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 25));
  }
}

/** Test factories: rows as the product would create them, written directly. */
export const factories = {
  async account(
    db: Db,
    props: { plan?: 'free' | 'pro' | 'team'; quota?: number; name?: string; contactEmail?: string } = {},
  ): Promise<{ id: string; managementKey: string }> {
    const id = newId('account');
    await db('accounts').insert({
      id,
      name: props.name ?? 'Test account',
      plan_id: props.plan ?? 'pro',
      quota_override: props.quota ?? null,
      contact_email: props.contactEmail ?? null,
    });
    const managementKey = await factories.apiKey(db, id, 'management');
    return { id, managementKey };
  },

  async apiKey(db: Db, accountId: string, type: KeyType, props: { revoked?: boolean } = {}): Promise<string> {
    const { key, prefix, hash } = generateKey(type);
    await db('api_keys').insert({
      id: newId('apiKey'),
      account_id: accountId,
      type,
      prefix,
      key_hash: hash,
      revoked_at: props.revoked ? new Date() : null,
    });
    return key;
  },

  async form(
    db: Db,
    accountId: string,
    props: Partial<{
      slug: string;
      status: FormStatus;
      honeypot_field: string;
      notify_emails: string[];
      redirect_url: string | null;
      bot_challenge_provider: ChallengeProvider | null;
      bot_challenge_secret: string | null;
      /** Its project; left out: the account's default (the database's trigger puts it there). */
      project_id: string;
      name: string;
    }> = {},
  ): Promise<{ id: string; slug: string }> {
    const id = newId('form');
    const slug = props.slug ?? `form-${randomBytes(6).toString('hex')}`;
    await db('forms').insert({
      id,
      account_id: accountId,
      name: props.name ?? 'Test form',
      slug,
      status: props.status ?? 'live',
      honeypot_field: props.honeypot_field ?? '_gotcha',
      notify_emails: JSON.stringify(props.notify_emails ?? []),
      redirect_url: props.redirect_url ?? null,
      bot_challenge_provider: props.bot_challenge_provider ?? null,
      bot_challenge_secret: props.bot_challenge_secret ?? null,
      project_id: props.project_id ?? null,
    });
    return { id, slug };
  },

  /** A project of the account (not its default), named `name`. */
  async project(db: Db, accountId: string, name: string): Promise<{ id: string; name: string }> {
    const id = newId('project');
    await db('projects').insert({ id, account_id: accountId, name });
    return { id, name };
  },

  /** A submission stored as ingest stores it (`storeTestSubmission`). */
  submission: storeTestSubmission,
  ...webhookFactories,
};

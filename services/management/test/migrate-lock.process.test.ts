import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { eventually, startNatsServer, startPostgres, startupBudgetMs, type OwnServer } from '@intake/shared/testing';
import { createDb, ensureDatabase } from '@intake/shared/base';
import { migrate } from '@intake/shared/schema';

const MIGRATE = path.resolve(__dirname, '../dist/cli/migrate.js');
const SHARED = path.resolve(__dirname, '../../../shared/dist/schema/index.js');
/** Rows of the table the test's migration indexes: enough that the build takes seconds. */
const ROWS = 600_000;
const TEST_MIGRATION = '900-test-bulk-index';
const INDEX_BUILD = `CREATE INDEX CONCURRENTLY IF NOT EXISTS bulk_body_idx ON bulk (body)`;

/**
 * The migrations Job's entry (`main` of services/management/dist/cli/migrate.js, built by `npx tsc -b`) in a process of
 * its own, running the product's migrations and one of this test's after them: a CONCURRENTLY index build over `bulk`.
 */
const script = `
  const { main } = require(${JSON.stringify(MIGRATE)});
  const { migrations } = require(${JSON.stringify(SHARED)});
  const bulkIndex = {
    name: ${JSON.stringify(TEST_MIGRATION)},
    config: { transaction: false },
    up: (knex) => knex.raw(${JSON.stringify(INDEX_BUILD)}),
    down: async () => undefined,
  };
  main(process.env, { migrations: [...migrations, bulkIndex] });`;

interface Migrator {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
}

/** What the migrators run against: a Postgres and a NATS of the test's own, and a client to watch them with. */
const scene = {
  postgres: undefined as unknown as OwnServer,
  nats: undefined as unknown as OwnServer,
  admin: undefined as unknown as pg.Client,
  migrators: [] as Migrator[],
};

function startMigrator(): Migrator {
  const child = spawn(process.execPath, ['-e', script], {
    detached: true,
    env: {
      ...process.env,
      DATABASE_URL: scene.postgres.url,
      NATS_URL: scene.nats.url,
      NATS_PREFIX: 'mig',
      MIGRATION_LOCK_WAIT_SECONDS: '120',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const migrator: Migrator = {
    child,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
  child.stdout?.on('data', (chunk: Buffer) => (migrator.stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (migrator.stderr += chunk.toString()));
  scene.migrators.push(migrator);
  return migrator;
}

interface Session {
  pid: number;
  state: string;
  backend_xmin: string | null;
  query: string;
}

/** The migrators' sessions (their application_name starts with intake-migrate), with what shows a snapshot. */
async function sessions(): Promise<Session[]> {
  const { rows } = await scene.admin.query<Session>(
    `SELECT pid, state, backend_xmin::text, query FROM pg_stat_activity
      WHERE datname = current_database() AND application_name LIKE 'intake-migrate%'`,
  );
  return rows;
}

/** True when each of `pids` is a session idle outside a transaction, without a snapshot (backend_xmin null). */
async function idleWithoutSnapshot(pids: number[]): Promise<boolean> {
  const now = (await sessions()).filter((s) => pids.includes(s.pid));
  return now.length > 0 && now.every((s) => s.state === 'idle' && s.backend_xmin === null);
}

/** `probe` comes true while `migrator` runs (a migrator that exits ends the wait with what it said). */
function whileRunning(migrator: Migrator, probe: () => Promise<boolean> | boolean, message: string) {
  const exited = new Error('exited');
  return eventually(
    async () => {
      if (migrator.child.exitCode !== null) throw exited;
      return probe();
    },
    { timeoutMs: startupBudgetMs(), message, stopOn: (err) => err === exited },
  ).catch((err: unknown) => {
    throw new Error(
      `${message}: ${String(err)}; the migrator's stdout: ${migrator.stdout}, stderr: ${migrator.stderr}`,
    );
  });
}

/** The pids of the sessions a migrator opened (those not in `before`), once it says it waits for the lock. */
async function waitingSessions(migrator: Migrator, before: Set<number>): Promise<number[]> {
  await whileRunning(
    migrator,
    () => migrator.stderr.includes('waiting for the migration lock'),
    'the migrator to wait for the lock',
  );
  const pids = (await sessions()).filter((s) => !before.has(s.pid)).map((s) => s.pid);
  expect(pids.length).toBeGreaterThan(0);
  return pids;
}

/** A migrator killed (SIGKILL, its process group) while it waits: its sessions end with it. */
async function killWhileWaiting(firstPids: Set<number>): Promise<void> {
  const killed = startMigrator();
  const pids = await waitingSessions(killed, firstPids);
  expect(await idleWithoutSnapshot(pids)).toBe(true);
  process.kill(-(killed.child.pid as number), 'SIGKILL');
  await killed.exited;
  await eventually(async () => !(await sessions()).some((s) => pids.includes(s.pid)), {
    timeoutMs: 20_000,
    message: 'the killed migrator’s sessions to end',
  });
}

/** Both exit 0 (bounded: with the old blocking lock both hang, each waiting for the other). */
async function bothFinish(first: Migrator, second: Migrator): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const codes = await Promise.race([
    Promise.all([first.exited, second.exited]),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the two migrators did not finish within 90 s (deadlocked)')), 90_000);
    }),
  ]).finally(() => clearTimeout(timer));
  expect([codes, first.stderr]).toEqual([[0, 0], '']);
  for (const out of [first.stdout, second.stdout])
    expect(JSON.parse(out)).toMatchObject({ status: 'migrated', cleared_stale_lock: false });
}

/** The test's migration ran once (the second found it done), and no build left an INVALID index. */
async function migratedOnceWithValidIndexes(): Promise<void> {
  const { admin } = scene;
  const { rows: runs } = await admin.query('SELECT count(*)::int AS n FROM knex_migrations WHERE name = $1', [
    TEST_MIGRATION,
  ]);
  expect(runs[0].n).toBe(1);
  const { rows: invalid } = await admin.query(
    'SELECT indexrelid::regclass::text AS name FROM pg_index WHERE NOT indisvalid',
  );
  expect(invalid).toEqual([]);
  const { rows: built } = await admin.query(
    `SELECT indisvalid FROM pg_index WHERE indexrelid = 'bulk_body_idx'::regclass`,
  );
  expect(built).toEqual([{ indisvalid: true }]);
}

/**
 * Two Jobs of a retried `helm upgrade`: the second finds the first building an index. It waits idle (no snapshot the
 * build must wait out: the old blocking pg_advisory_lock deadlocked with it, invisibly to Postgres), then finds
 * nothing to do; a migrator killed while it waits leaves no backend behind.
 */
describe('two migrators at once', () => {
  let gate: pg.Client;

  beforeAll(async () => {
    for (const file of [MIGRATE, SHARED])
      if (!existsSync(file)) throw new Error(`${file} is missing: run npx tsc -b first`);
    [scene.postgres, scene.nats] = await Promise.all([startPostgres(), startNatsServer()]);
    await ensureDatabase(scene.postgres.url);
    const db = createDb(scene.postgres.url, { poolMax: 2 });
    try {
      await migrate(db);
    } finally {
      await db.destroy();
    }
    scene.admin = new pg.Client({ connectionString: scene.postgres.url });
    gate = new pg.Client({ connectionString: scene.postgres.url });
    await Promise.all([scene.admin.connect(), gate.connect()]);
    await scene.admin.query(
      `CREATE TABLE bulk AS SELECT g AS id, md5(g::text) AS body FROM generate_series(1, ${ROWS}) g; ANALYZE bulk`,
    );
  }, 120_000);

  afterAll(async () => {
    for (const { child } of scene.migrators) {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await Promise.all(scene.migrators.map((m) => m.exited));
    await Promise.all([scene.admin?.end(), gate?.end()].map((p) => p?.catch(() => undefined)));
    await Promise.all([scene.postgres?.destroy(), scene.nats?.destroy()]);
  });

  it('the second waits idle, then finds nothing to do; one killed mid-wait leaves no backend', async () => {
    // The gate: a transaction writing the table holds the first migrator's build at its start (it waits for the
    // table's writers), so the others surely arrive while it builds.
    await gate.query('BEGIN');
    await gate.query('LOCK TABLE bulk IN ROW EXCLUSIVE MODE');
    await gate.query('SELECT txid_current()');
    const first = startMigrator();
    await whileRunning(
      first,
      async () =>
        (await sessions()).some((s) => s.query.startsWith('CREATE INDEX CONCURRENTLY') && s.state === 'active'),
      "the first migrator's index build",
    );
    const firstPids = new Set((await sessions()).map((s) => s.pid));
    await killWhileWaiting(firstPids);

    // The second Job: it names the first (its lock session), and holds no snapshot while it waits.
    const second = startMigrator();
    const secondPids = await waitingSessions(second, firstPids);
    const { rows: holders } = await scene.admin.query(
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND database =
        (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    expect(holders).toHaveLength(1);
    expect(second.stderr).toContain(`Postgres pid ${holders[0].pid}`);
    expect(second.stderr).toMatch(/"intake-migrate [^"]+"/);
    expect(await idleWithoutSnapshot(secondPids)).toBe(true);

    // The build goes on, and takes seconds; the second stays idle meanwhile.
    const buildStarted = Date.now();
    await gate.query('COMMIT');
    await eventually(
      async () => {
        const { rows } = await scene.admin.query(`SELECT phase FROM pg_stat_progress_create_index`);
        return rows.length === 1 && rows[0].phase !== 'waiting for writers before build';
      },
      { timeoutMs: 20_000, message: 'the build to start' },
    );
    expect(await idleWithoutSnapshot(secondPids)).toBe(true);

    await bothFinish(first, second);
    process.stdout.write(`index build and both migrators done ${Date.now() - buildStarted} ms after the gate opened\n`);
    await migratedOnceWithValidIndexes();
  }, 300_000);
});

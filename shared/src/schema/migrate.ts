import type { Knex } from 'knex';
import type pg from 'pg';
import type { Db } from '../base/db';
import { migrations, type Migration } from './migrations';

/** Migrations compiled into the package (no file-system loading, so it works from src in Jest and from dist in production). */
function sourceOf(list: readonly Migration[]): Knex.MigrationSource<Migration> {
  return {
    getMigrations: async () => [...list],
    getMigrationName: (m) => m.name,
    getMigration: async (m) => m,
  };
}

/** The database was migrated by migrations this version does not know. */
export class UnknownMigrationsError extends Error {
  override name = 'UnknownMigrationsError';
  constructor(readonly unknown: string[]) {
    super(
      `The database was migrated by migrations this version does not know (${unknown.join(', ')}): ` +
        'a newer release (or a development build) migrated it, and this one cannot run on it. ' +
        'Roll forward to that release or a later one, or restore a backup taken before the upgrade.',
    );
  }
}

/** The session-level advisory lock every migrator of this release takes (an arbitrary constant: "intake migrate"). */
const MIGRATION_LOCK = 7_305_218_106;

/** How long a migrator waits for another one's lock by default (MIGRATION_LOCK_WAIT_SECONDS in the processes). */
const LOCK_WAIT_MS = 600_000;
/** Between two tries the waiting session is idle: no statement, no transaction, so no snapshot an index build waits on. */
const LOCK_POLL_MS = 1000;
/** While it waits, a migrator says again who holds the lock this often (and whenever the holder changes). */
const LOCK_REPORT_MS = 60_000;

export interface MigrateOptions {
  /** The migrations to run: the package's own (tests add one of theirs). */
  migrations?: readonly Migration[];
  /** How long to wait for a migrator that holds the lock before failing with MigrationLockBusyError; 0 tries once. */
  lockWaitMs?: number;
  /** Told who holds the lock when a wait starts, when the holder changes, and every minute of the wait. */
  onLockWait?: (holder: MigrationLockHolder | undefined, waitedMs: number) => void;
}

/** The session holding the migration lock, as pg_stat_activity shows it (fields it hides from other roles are null). */
export interface MigrationLockHolder {
  pid: number;
  applicationName: string | null;
  clientAddress: string | null;
  connectedAt: Date | null;
  /** What another session of the same client is running, when one is (a migration's statement: its index build). */
  running: { query: string; since: Date | null } | null;
}

/** One line about the holder, for a log or an error message. */
export function describeLockHolder(holder: MigrationLockHolder | undefined): string {
  if (!holder) return 'a session that has just released it';
  const parts = [
    `"${holder.applicationName ?? '?'}" (Postgres pid ${holder.pid}`,
    holder.clientAddress ? `, from ${holder.clientAddress}` : '',
    holder.connectedAt ? `, connected at ${holder.connectedAt.toISOString()}` : '',
    ')',
  ];
  if (holder.running) {
    const since = holder.running.since ? ` since ${holder.running.since.toISOString()}` : '';
    parts.push(`, running${since}: ${holder.running.query.replace(/\s+/g, ' ').trim().slice(0, 160)}`);
  }
  return parts.join('');
}

/** Another migrator held the lock for longer than this one was to wait. */
export class MigrationLockBusyError extends Error {
  override name = 'MigrationLockBusyError';
  constructor(
    readonly holder: MigrationLockHolder | undefined,
    readonly waitedMs: number,
  ) {
    super(
      `Another migrator holds the migration lock: ${describeLockHolder(holder)}. ` +
        `Waited ${Math.round(waitedMs / 1000)} s for it. Let it finish (it may be an earlier release's migrations, ` +
        'still building an index), then run this one again: it will find that migration done.',
    );
  }
}

/**
 * Runs the migrations not yet run, one migrator at a time: each holds a Postgres advisory lock for its whole run (on
 * a connection of its own, so the pool needs two). Postgres ends that lock with the session, so a migrator killed
 * mid-run (an evicted Job, a timed-out `helm upgrade`) leaves no lock behind; knex's own lock row, which it does
 * leave set, is then stale for whoever holds the advisory lock, and is cleared before knex looks at it.
 * Returns whether a stale lock was cleared.
 */
export async function migrate(db: Db, options: MigrateOptions = {}): Promise<{ clearedStaleLock: boolean }> {
  const list = options.migrations ?? migrations;
  return underMigrationLock(db, options, async () => {
    const clearedStaleLock = await clearKnexLock(db);
    await refuseUnknownMigrations(db, list);
    await db.migrate.latest({ migrationSource: sourceOf(list), tableName: 'knex_migrations' });
    return { clearedStaleLock };
  });
}

/**
 * `admin migrate --unlock`: clears knex's migration lock (left set by a migrator that was killed) under the advisory
 * lock, so never under a migrator that is running; runs no migration. Returns whether it was set.
 */
export function unlockMigrations(
  db: Db,
  options: Pick<MigrateOptions, 'lockWaitMs' | 'onLockWait'> = {},
): Promise<boolean> {
  return underMigrationLock(db, options, () => clearKnexLock(db));
}

/**
 * Runs `work` holding the migration lock. The lock is tried, not waited for inside Postgres: a session blocked in
 * `pg_advisory_lock` runs a statement, whose snapshot a `CREATE INDEX CONCURRENTLY` of the holder must wait out, while
 * the holder waits for its build before it lets go: a deadlock through the two clients that Postgres cannot see. Here
 * the waiting session sits idle between tries (it holds no snapshot), and a client that dies mid-wait ends its
 * session at once.
 */
async function underMigrationLock<T>(db: Db, options: MigrateOptions, work: () => Promise<T>): Promise<T> {
  const connection = (await db.client.acquireConnection()) as pg.ClientBase;
  try {
    await takeMigrationLock(connection, options);
    try {
      return await work();
    } finally {
      await connection.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await db.client.releaseConnection(connection);
  }
}

async function takeMigrationLock(connection: pg.ClientBase, options: MigrateOptions): Promise<void> {
  const waitMs = options.lockWaitMs ?? LOCK_WAIT_MS;
  const started = Date.now();
  let reported: { pid: number | undefined; at: number } | undefined;
  for (;;) {
    const { rows } = await connection.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
      MIGRATION_LOCK,
    ]);
    if (rows[0]?.locked) return;
    const waited = Date.now() - started;
    const holder = await lockHolder(connection);
    if (waited >= waitMs) throw new MigrationLockBusyError(holder, waited);
    if (!reported || reported.pid !== holder?.pid || Date.now() - reported.at >= LOCK_REPORT_MS) {
      options.onLockWait?.(holder, waited);
      reported = { pid: holder?.pid, at: Date.now() };
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(LOCK_POLL_MS, waitMs - waited)));
  }
}

/** Who holds the migration lock in this database (a bigint key is stored as classid = high half, objid = low half). */
async function lockHolder(connection: pg.ClientBase): Promise<MigrationLockHolder | undefined> {
  const { rows } = await connection.query<{
    pid: number;
    application_name: string | null;
    client_addr: string | null;
    backend_start: Date | null;
    running: string | null;
    running_since: Date | null;
  }>(
    `SELECT a.pid, a.application_name, host(a.client_addr) AS client_addr, a.backend_start, w.query AS running,
            w.query_start AS running_since
       FROM pg_locks l
       JOIN pg_stat_activity a ON a.pid = l.pid
       LEFT JOIN LATERAL (
         SELECT o.query, o.query_start FROM pg_stat_activity o
          WHERE o.pid <> a.pid AND o.datid = a.datid AND o.state = 'active'
            AND o.application_name IS NOT DISTINCT FROM a.application_name
            AND o.client_addr IS NOT DISTINCT FROM a.client_addr
          ORDER BY o.query_start LIMIT 1
       ) w ON true
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = ($1::bigint >> 32)::oid AND l.objid = ($1::bigint & 4294967295)::oid`,
    [MIGRATION_LOCK],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    pid: row.pid,
    applicationName: row.application_name,
    clientAddress: row.client_addr,
    connectedAt: row.backend_start,
    running: row.running === null ? null : { query: row.running, since: row.running_since },
  };
}

/** Sets knex's lock row free; true when it was set. Only under the advisory lock, where it can only be stale. */
async function clearKnexLock(db: Db): Promise<boolean> {
  if (!(await db.schema.hasTable('knex_migrations_lock'))) return false;
  return (await db('knex_migrations_lock').where({ is_locked: 1 }).update({ is_locked: 0 })) > 0;
}

/** The names of the migrations the database has run, in the order it ran them (none before the first run). */
export async function appliedMigrations(db: Db): Promise<string[]> {
  if (!(await db.schema.hasTable('knex_migrations'))) return [];
  return db('knex_migrations').orderBy('id').pluck('name');
}

/** Fails with UnknownMigrationsError, which says what to do, rather than knex's "migration directory is corrupt". */
async function refuseUnknownMigrations(db: Db, list: readonly Migration[]): Promise<void> {
  const done = await appliedMigrations(db);
  const known = new Set(list.map((m) => m.name));
  const unknown = done.filter((name) => !known.has(name));
  if (unknown.length > 0) throw new UnknownMigrationsError(unknown);
}

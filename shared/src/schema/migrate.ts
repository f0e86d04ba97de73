import type { Knex } from 'knex';
import type pg from 'pg';
import type { Db } from '../base/db';
import { migrations } from './migrations';

/** The migrations compiled into the package (no file-system loading, so it works from src in Jest and from dist in production). */
const migrationSource: Knex.MigrationSource<(typeof migrations)[number]> = {
  getMigrations: async () => migrations,
  getMigrationName: (m) => m.name,
  getMigration: async (m) => m,
};

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

/**
 * Runs the migrations not yet run, one migrator at a time: each holds a Postgres advisory lock for its whole run (on
 * a connection of its own, so the pool needs two). Postgres ends that lock with the session, so a migrator killed
 * mid-run (an evicted Job, a timed-out `helm upgrade`) leaves no lock behind; knex's own lock row, which it does
 * leave set, is then stale for whoever holds the advisory lock, and is cleared before knex looks at it.
 * Returns whether a stale lock was cleared.
 */
export async function migrate(db: Db): Promise<{ clearedStaleLock: boolean }> {
  return underMigrationLock(db, async () => {
    const clearedStaleLock = await clearKnexLock(db);
    await refuseUnknownMigrations(db);
    await db.migrate.latest({ migrationSource, tableName: 'knex_migrations' });
    return { clearedStaleLock };
  });
}

/**
 * `admin migrate --unlock`: clears knex's migration lock (left set by a migrator that was killed) under the advisory
 * lock, so never under a migrator that is running; runs no migration. Returns whether it was set.
 */
export function unlockMigrations(db: Db): Promise<boolean> {
  return underMigrationLock(db, () => clearKnexLock(db));
}

async function underMigrationLock<T>(db: Db, work: () => Promise<T>): Promise<T> {
  const connection = (await db.client.acquireConnection()) as pg.ClientBase;
  try {
    await connection.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      return await work();
    } finally {
      await connection.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await db.client.releaseConnection(connection);
  }
}

/** Sets knex's lock row free; true when it was set. Only under the advisory lock, where it can only be stale. */
async function clearKnexLock(db: Db): Promise<boolean> {
  if (!(await db.schema.hasTable('knex_migrations_lock'))) return false;
  return (await db('knex_migrations_lock').where({ is_locked: 1 }).update({ is_locked: 0 })) > 0;
}

/** Fails with UnknownMigrationsError, which says what to do, rather than knex's "migration directory is corrupt". */
async function refuseUnknownMigrations(db: Db): Promise<void> {
  if (!(await db.schema.hasTable('knex_migrations'))) return;
  const done: string[] = await db('knex_migrations').orderBy('id').pluck('name');
  const known = new Set(migrations.map((m) => m.name));
  const unknown = done.filter((name) => !known.has(name));
  if (unknown.length > 0) throw new UnknownMigrationsError(unknown);
}

import '@intake/shared/register';
import { hostname } from 'node:os';
import { createDb, ensureDatabase, loadConfig } from '@intake/shared/base';
import {
  appliedMigrations,
  describeLockHolder,
  MigrationLockBusyError,
  type Migration,
  migrate,
  UnknownMigrationsError,
} from '@intake/shared/schema';
import { connectNatsInBackground, natsSecurity, streamLimits, ensureStreams } from '@intake/shared/messaging';
import { withTimeout } from '@intake/shared/runtime';

/** How long the migrations Job waits for NATS before it fails. */
const NATS_WAIT_MS = 30_000;

/** How often Postgres checks that a migrator's client is still there while it runs a statement (an index build). */
const CLIENT_CHECK_MS = 5000;

/** The exit code when another migrator held the lock past MIGRATION_LOCK_WAIT_SECONDS (EX_TEMPFAIL): the chart's Job fails at once on it. */
export const LOCK_BUSY_EXIT_CODE = 75;

/**
 * The exit code when a newer release migrated the database (EX_DATAERR): a retry would refuse again, so the chart's
 * Job fails at once on it too; before a `helm rollback`, that failure stops the rollback.
 */
export const NEWER_SCHEMA_EXIT_CODE = 65;

/** The process's exit code for a failure of runMigrations: the two the chart's Job does not retry, else 1. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof MigrationLockBusyError) return LOCK_BUSY_EXIT_CODE;
  return err instanceof UnknownMigrationsError ? NEWER_SCHEMA_EXIT_CODE : 1;
}

/**
 * `node services/management/dist/cli/migrate.js`: what the Helm chart's pre-install/pre-upgrade
 * Job and docker compose's one-shot `migrate` service run before the services start. Creates the
 * database when it is missing (and the role may), runs the migrations and provisions the JetStream
 * streams. Idempotent. Prints one JSON line on stdout; exits non-zero on failure.
 */
export async function runMigrations(
  env: NodeJS.ProcessEnv = process.env,
  options: { natsWaitMs?: number; migrations?: readonly Migration[]; log?: (line: string) => void } = {},
): Promise<{ migrations: string[]; streams: string[]; cleared_stale_lock: boolean }> {
  const config = loadConfig(env);
  // Postgres itself, not a pooler (DATABASE_DIRECT_URL): the migrations hold a lock for their whole run.
  const url = config.DATABASE_DIRECT_URL;
  await ensureDatabase(url).catch(() => undefined); // a managed database usually exists and the role may not create one
  // Named after the host (a Job's pod), which a migrator waiting for this one's lock names in its log.
  const db = createDb(url, {
    poolMax: 2,
    applicationName: `intake-migrate ${hostname()}`,
    clientConnectionCheckMs: CLIENT_CHECK_MS,
  });
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  try {
    // A lock a killed Job left is cleared (and said so in the output line). Another migrator's run is waited for, idle.
    const { clearedStaleLock } = await migrate(db, {
      migrations: options.migrations,
      lockWaitMs: config.MIGRATION_LOCK_WAIT_SECONDS * 1000,
      onLockWait: (holder, waitedMs) =>
        log(
          `waiting for the migration lock (${Math.round(waitedMs / 1000)} s of ` +
            `MIGRATION_LOCK_WAIT_SECONDS=${config.MIGRATION_LOCK_WAIT_SECONDS}): another migrator holds it: ` +
            describeLockHolder(holder),
        ),
    });
    const done = await appliedMigrations(db);
    const nats = connectNatsInBackground(config.NATS_URL, config.NATS_PREFIX, 'intake-migrate', {
      replicas: config.NATS_STREAM_REPLICAS,
      streams: streamLimits(config),
      security: natsSecurity(config),
    });
    try {
      // The Job fails fast (and is retried by its backoff) rather than hang until its deadline.
      const waitMs = options.natsWaitMs ?? NATS_WAIT_MS;
      await withTimeout(
        nats.connected,
        waitMs,
        `NATS did not answer within ${waitMs / 1000} s at NATS_URL (${config.NATS_URL})`,
      );
      await ensureStreams(nats);
      return {
        migrations: done,
        streams: [nats.names.eventsStream, nats.names.deliveriesStream],
        cleared_stale_lock: clearedStaleLock,
      };
    } finally {
      await nats.close();
    }
  } finally {
    await db.destroy();
  }
}

/** The process: one JSON line on stdout, or the failure on stderr and a non-zero exit code. */
export async function main(
  env: NodeJS.ProcessEnv = process.env,
  options: Parameters<typeof runMigrations>[1] = {},
): Promise<void> {
  try {
    const result = await runMigrations(env, options);
    process.stdout.write(`${JSON.stringify({ status: 'migrated', ...result })}\n`);
  } catch (err) {
    process.stderr.write(`migration failed: ${(err as Error).message}\n`);
    process.exitCode = exitCodeFor(err);
  }
}

if (require.main === module) void main();

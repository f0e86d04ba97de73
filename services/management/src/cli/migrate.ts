import '@intake/shared/register';
import {
  connectNatsInBackground,
  natsSecurity,
  withTimeout,
  createDb,
  ensureDatabase,
  ensureStreams,
  loadConfig,
  migrate,
} from '@intake/shared';

/** How long the migrations Job waits for NATS before it fails. */
const NATS_WAIT_MS = 30_000;

/**
 * `node services/management/dist/cli/migrate.js`: what the Helm chart's pre-install/pre-upgrade
 * Job and docker compose's one-shot `migrate` service run before the services start. Creates the
 * database when it is missing (and the role may), runs the migrations and provisions the JetStream
 * streams. Idempotent. Prints one JSON line on stdout; exits non-zero on failure.
 */
export async function runMigrations(
  env: NodeJS.ProcessEnv = process.env,
  options: { natsWaitMs?: number } = {},
): Promise<{ migrations: string[]; streams: string[]; cleared_stale_lock: boolean }> {
  const config = loadConfig(env);
  // Postgres itself, not a pooler (DATABASE_DIRECT_URL): the migrations hold a lock for their whole run.
  const url = config.DATABASE_DIRECT_URL;
  await ensureDatabase(url).catch(() => undefined); // a managed database usually exists and the role may not create one
  const db = createDb(url, { poolMax: 2, applicationName: 'intake-migrate' });
  try {
    // A lock a killed Job left is cleared (and said so in the output line).
    const { clearedStaleLock } = await migrate(db);
    const done: { name: string }[] = await db('knex_migrations').select('name').orderBy('id');
    const nats = connectNatsInBackground(config.NATS_URL, config.NATS_PREFIX, 'intake-migrate', {
      replicas: config.NATS_STREAM_REPLICAS,
      maxStreamBytes: config.NATS_STREAM_MAX_BYTES,
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
        migrations: done.map((m) => m.name),
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

if (require.main === module) {
  runMigrations().then(
    (result) => {
      process.stdout.write(`${JSON.stringify({ status: 'migrated', ...result })}\n`);
    },
    (err) => {
      process.stderr.write(`migration failed: ${(err as Error).message}\n`);
      process.exitCode = 1;
    },
  );
}

import '@intake/shared/register';
import { connectNats, createDb, ensureDatabase, ensureStreams, loadConfig, migrate } from '@intake/shared';

/**
 * `node services/management/dist/cli/migrate.js`: what the Helm chart's pre-install/pre-upgrade
 * Job and docker compose's one-shot `migrate` service run before the services start. Creates the
 * database when it is missing (and the role may), runs the migrations and provisions the JetStream
 * streams. Idempotent. Prints one JSON line on stdout; exits non-zero on failure.
 */
export async function runMigrations(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ migrations: string[]; streams: string[] }> {
  const config = loadConfig(env);
  await ensureDatabase(config.DATABASE_URL).catch(() => undefined); // a managed database usually exists and the role may not create one
  const db = createDb(config.DATABASE_URL, { poolMax: 1, applicationName: 'intake-migrate' });
  try {
    await migrate(db);
    const done: { name: string }[] = await db('knex_migrations').select('name').orderBy('id');
    const nats = await connectNats(config.NATS_URL, config.NATS_PREFIX, 'intake-migrate', {
      replicas: config.NATS_STREAM_REPLICAS,
      maxStreamBytes: config.NATS_STREAM_MAX_BYTES,
    });
    try {
      await ensureStreams(nats);
      return { migrations: done.map((m) => m.name), streams: [nats.names.eventsStream, nats.names.deliveriesStream] };
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

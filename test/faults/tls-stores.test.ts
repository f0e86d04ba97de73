import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, readFileSync, rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createLogger, ensureDatabase } from '@intake/shared/base';
import { migrate } from '@intake/shared/schema';
import { closePlatform, createPlatform, type Platform } from '@intake/shared/runtime';
import {
  factories,
  startPostgres,
  startRedisServer,
  testCertificates,
  testConfig,
  type OwnServer,
} from '@intake/shared/testing';
import { pool, post, processEnv, startService, stopAll, tally, tempDir, type ServiceProcess } from './harness';

/**
 * Postgres and Redis reached over TLS under a private CA: a Postgres started with `ssl = on` and a certificate the CA
 * signed, reached with DATABASE_CA_FILE (verify-full: a connection that does not trust the CA is refused), and a
 * Redis listening on TLS only with a password (`rediss://:…@`), reached with REDIS_CA_FILE. An ingest process stores
 * and rate-limits posts through both.
 */
/** Certificates under a CA of our own, a Postgres with ssl = on and a TLS-only Redis with a password, and a platform on them. */
async function startStoresOverTls(
  dir: string,
  ctx: { postgres: OwnServer; redis: OwnServer; platform: Platform; ca: string },
): Promise<void> {
  const files = await testCertificates(dir);
  ctx.ca = files.ca;
  // Postgres reads its key only when the postgres user owns it, readable by nobody else (and the directory must let
  // that user in).
  chmodSync(dir, 0o755);
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    for (const f of [files.server.cert, files.server.key, files.ca]) chownSync(f, uid, gid);
  }
  chmodSync(files.server.key, 0o600);
  ctx.postgres = await startPostgres({
    ssl: 'on',
    ssl_cert_file: files.server.cert,
    ssl_key_file: files.server.key,
  });
  // Redis (not running as postgres) gets copies of its own.
  const redisKey = `${dir}/redis.key`;
  execFileSync('cp', [files.server.key, redisKey]);
  chmodSync(redisKey, 0o644);
  ctx.redis = await startRedisServer({
    tls: { cert: files.server.cert, key: redisKey, ca: files.ca },
    password: 'redis pass/1',
  });
  const config = testConfig({
    DATABASE_URL: ctx.postgres.url,
    DATABASE_CA_FILE: files.ca,
    REDIS_URL: ctx.redis.url,
    REDIS_CA_FILE: files.ca,
  });
  await ensureDatabase(config.DATABASE_URL);
  ctx.platform = await createPlatform(config, {
    service: 'test',
    logger: createLogger({ level: 'silent', service: 'test' }),
  });
  await migrate(ctx.platform.db);
}

describe('Postgres and Redis over TLS with a private CA', () => {
  const certs = tempDir('intake-store-certs-');
  const processes: ServiceProcess[] = [];
  const ctx = {} as { postgres: OwnServer; redis: OwnServer; platform: Platform; ca: string };

  beforeAll(() => startStoresOverTls(certs.dir, ctx), 60_000);

  afterAll(async () => {
    await stopAll(processes);
    const { platform } = ctx;
    if (platform) {
      for (const stream of [platform.nats.names.eventsStream, platform.nats.names.deliveriesStream])
        await platform.nats.jsm.streams.delete(stream).catch(() => undefined);
      await closePlatform(platform).catch(() => undefined);
      rmSync(platform.config.FILES_DIR, { recursive: true, force: true });
    }
    await Promise.all([ctx.postgres?.destroy(), ctx.redis?.destroy()]);
    certs.remove();
  });

  it('stores and rate-limits posts through TLS connections it verified, and refuses a server it cannot verify', async () => {
    const { platform } = ctx;
    const account = await factories.account(platform.db, { plan: 'team', quota: 100_000 });
    const form = await factories.form(platform.db, account.id);
    const env = processEnv(platform.config, { RATE_LIMIT_POINTS: '5', TRUST_PROXY: 'true' });
    const ingest = await startService('ingest', env, { ready: true });
    processes.push(ingest);
    const answers = await pool(7, 1, () =>
      post(ingest.url, form.slug, undefined, { 'x-forwarded-for': '203.0.113.7' }),
    );

    // Every connection of the ingest process to Postgres is TLS.
    const { rows } = await platform.db.raw(
      `SELECT s.ssl, count(*)::int AS n FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
       WHERE a.application_name = 'intake-ingest' GROUP BY s.ssl`,
    );
    // The limiter counted in Redis, over TLS with the password.
    const redis = new Redis(ctx.redis.url, { tls: { ca: readFileSync(ctx.ca) } });
    const keys = await redis.keys(`${platform.config.NATS_PREFIX}:ingest-rl:*`).finally(() => redis.disconnect());
    // A client that does not trust the CA is refused (verify-full).
    const untrusting = new pg.Client({ connectionString: `${ctx.postgres.url}?sslmode=verify-full` });
    const refused = await untrusting.connect().then(
      () => 'connected',
      (err: Error) => err.message,
    );
    await untrusting.end().catch(() => undefined);
    console.log(
      `tls stores: posts ${JSON.stringify(tally(answers.map((a) => a.status)))}; ingest's Postgres connections ` +
        `${JSON.stringify(rows)}; ${keys.length} limiter key in Redis; without the CA: ${refused}`,
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 201: 5, 429: 2 });
    expect(rows).toEqual([{ ssl: true, n: expect.any(Number) }]);
    expect(keys).toHaveLength(1);
    expect(refused).toMatch(/self.signed|unable to verify|certificate/i);
  });
});

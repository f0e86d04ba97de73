import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import type { Config } from '../base/config';
import { createDb, ensureDatabase, type Db } from '../base/db';
import { describeLockHolder, migrate } from '../schema/migrate';
import { createLogger, type Logger } from '../base/logger';
import { connectNatsInBackground, natsSecurity, type Nats } from '../messaging/nats';
import { ensureStreams, streamLimits } from '../messaging/streams';
import { SecretBox } from '../base/secrets';
import { systemClock, type Clock } from '../contracts/time';
import type { BlobStore } from '../base/blob-store';
import { createBlobStore } from '../base/create-blob-store';
import { createHttpServer } from '../http/server';

/** Everything a service needs from the outside world, passed to buildApp(deps) and the workers as one object. */
export interface Platform {
  config: Config;
  logger: Logger;
  db: Db;
  nats: Nats;
  /** Undefined without REDIS_URL: ingest's rate limit then counts in each process. */
  redis: Redis | undefined;
  clock: Clock;
  secrets: SecretBox;
  blobs: BlobStore;
}

export interface PlatformOptions {
  service: string;
  /** Create the database when missing and run migrations (the all-in-one process and the migrations Job do). */
  migrate?: boolean;
  clock?: Clock;
  logger?: Logger;
  poolMax?: number;
  /** How long a query waits for a connection (createDb's `waitMs`; tests set their budget's share). */
  dbWaitMs?: number;
  /**
   * Returns without waiting for NATS (a service's process: it listens and is ready on Postgres alone, and starts
   * its workers once NATS answers; see runStandalone). Otherwise NATS is waited for and the streams provisioned.
   */
  natsInBackground?: boolean;
}

export async function createPlatform(config: Config, options: PlatformOptions): Promise<Platform> {
  const logger = options.logger ?? createLogger({ level: config.LOG_LEVEL, service: options.service });
  const direct = config.DATABASE_DIRECT_URL;
  if (options.migrate) {
    // Behind a pooler the migrations (and their lock) go to Postgres itself.
    await ensureDatabase(direct);
    const migrating = createDb(direct, {
      poolMax: 2,
      applicationName: `intake-${options.service}-migrate ${hostname()}`,
      clientConnectionCheckMs: 5000,
    });
    try {
      await migrate(migrating, {
        lockWaitMs: config.MIGRATION_LOCK_WAIT_SECONDS * 1000,
        onLockWait: (holder) =>
          logger.warn({ holder: describeLockHolder(holder) }, 'waiting for another migrator to finish'),
      });
    } finally {
      await migrating.destroy();
    }
  }
  const db = createDb(config.DATABASE_URL, {
    poolMax: options.poolMax ?? config.PG_POOL_MAX,
    applicationName: `intake-${options.service}`,
    waitMs: options.dbWaitMs,
  });
  const redis = config.REDIS_URL ? connectRedis(config.REDIS_URL, config.REDIS_CA_FILE, logger) : undefined;
  let reported = false;
  const nats = connectNatsInBackground(config.NATS_URL, config.NATS_PREFIX, `intake-${options.service}`, {
    replicas: config.NATS_STREAM_REPLICAS,
    streams: streamLimits(config),
    security: natsSecurity(config),
    onConnectError: (err) => {
      // Once, then at debug: a service waits for NATS as long as it takes.
      if (reported) return logger.debug({ err }, 'NATS does not answer yet');
      reported = true;
      logger.warn(
        { err, nats_url: config.NATS_URL },
        options.natsInBackground
          ? 'waiting for NATS (NATS_URL), retrying every 2 s: serving meanwhile, posts wait in the outbox; webhooks, ' +
              'mail and usage counting start once it answers'
          : 'NATS does not answer yet (NATS_URL); retrying every 2 s',
      );
    },
    onLost: (what, err) => {
      if (what === 'back') return logger.info('NATS connection back');
      logger.error(
        { err, nats_url: config.NATS_URL },
        what === 'refused'
          ? "NATS refuses this process's credentials on reconnecting; retrying (check the NATS_* credentials and the " +
              `server's); /livez fails after NATS_REFUSED_LIVENESS_SECONDS (${config.NATS_REFUSED_LIVENESS_SECONDS} s)`
          : 'the NATS connection closed for good; making a new one',
      );
    },
  });
  const provisioned = nats.connected.then(() =>
    ensureStreams(nats).catch((err) => logger.warn({ err }, 'could not provision JetStream streams yet')),
  );
  if (!options.natsInBackground) await provisioned;
  // In the background a refusal (wrong credentials) is the process's to report: see runStandalone.
  else provisioned.catch(() => undefined);
  return {
    config,
    logger,
    db,
    nats,
    redis,
    clock: options.clock ?? systemClock,
    secrets: new SecretBox(config.SECRETS_KEY),
    blobs: createBlobStore(config),
  };
}

/**
 * A Redis client that reconnects for ever and never queues a command while disconnected (the limiter falls back). A
 * `rediss://` URL is TLS, verified against REDIS_CA_FILE when given (else the system's CAs); its password, if any,
 * comes in the URL (the chart reads REDIS_URL from a Secret).
 */
function connectRedis(url: string, caFile: string | undefined, logger: Logger): Redis {
  const redis = new Redis(url, {
    ...(caFile ? { tls: { ca: readFileSync(caFile) } } : {}),
    lazyConnect: false,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    // Off: ioredis would hold every command until the next setImmediate, and ingest's rate limit,
    // which already gathers a turn's posts and sends them from a setImmediate of its own, then
    // waited one more turn of the event loop per post (see judge/gate.ts in ingest).
    enableAutoPipelining: false,
    connectTimeout: 2000,
    retryStrategy: (n) => Math.min(n * 200, 2000),
  });
  // The message and code only: ioredis attaches the refused command, whose arguments (`HELLO 3 AUTH default ...`)
  // hold the password. A refusal of the credentials is said once at warn (until Redis accepts them again), since at
  // info it showed only as `"redis":"down"` in /v1/health.
  let refusalSaid = false;
  redis.on('ready', () => (refusalSaid = false));
  redis.on('error', (err: Error & { code?: string }) => {
    logger.debug({ err: { message: err.message, code: err.code } }, 'redis connection error');
    if (refusalSaid || !/^(WRONGPASS|NOAUTH|NOPERM)\b/.test(err.message)) return;
    refusalSaid = true;
    logger.warn({ err: { message: err.message } }, 'Redis refuses the credentials in REDIS_URL; retrying');
  });
  return redis;
}

export async function closePlatform(platform: Platform): Promise<void> {
  await platform.nats.close();
  platform.redis?.disconnect();
  await platform.db.destroy();
}

/** A long-running part of a service (a consumer, the outbox relay) that stops cleanly on shutdown. */
export interface Worker {
  stop(): Promise<void>;
}

/**
 * Listens, and on SIGTERM/SIGINT drains: readiness answers 503 at once, requests are still served for
 * SHUTDOWN_DELAY_SECONDS (the endpoint is being removed from the Service and the ingress meanwhile; a listener closed
 * at once refuses the connections still sent to it), then it stops accepting, finishes in-flight requests (with
 * `Connection: close`), then the workers' messages, and closes NATS and the pool.
 */
export async function serve(options: {
  platform: Platform;
  handler: http.RequestListener;
  workers: Worker[];
  port: number;
  state: { draining: boolean };
  name: string;
}): Promise<{ server: http.Server; url: string; shutdown(): Promise<void> }> {
  const { platform, workers, state } = options;
  const server = createHttpServer(options.handler, { problemsUrl: platform.config.PROBLEMS_URL });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://localhost:${port}`;
  let closing: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    closing ??= (async () => {
      state.draining = true;
      const delayMs = platform.config.SHUTDOWN_DELAY_SECONDS * 1000;
      if (delayMs > 0) {
        platform.logger.info({ seconds: delayMs / 1000 }, 'draining: not ready, still serving while endpoints go');
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
      platform.logger.info('draining: no new connections, finishing in-flight work');
      // Keep-alive connections are closed after their request in flight, so their clients reconnect elsewhere.
      server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) =>
        res.setHeader('connection', 'close'),
      );
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Requests first (at most 10 s), then the workers: the relay still publishes the events of
      // the last posts, and consumers finish what they hold.
      await Promise.race([closed, new Promise((r) => setTimeout(r, 10_000).unref())]);
      server.closeAllConnections();
      await Promise.allSettled(workers.map((w) => w.stop()));
      await closePlatform(platform);
      platform.logger.info('stopped');
    })();
    return closing;
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void shutdown().then(
        () => process.exit(0),
        (err) => {
          platform.logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  return { server, url, shutdown };
}

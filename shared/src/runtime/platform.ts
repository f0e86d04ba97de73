import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { Config } from '../base/config';
import { createDb, ensureDatabase, migrate, type Db } from '../base/db';
import { createLogger, type Logger } from '../base/logger';
import { connectNats, ensureStreams, type Nats } from '../messaging/nats';
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
  redis: Redis;
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
}

export async function createPlatform(config: Config, options: PlatformOptions): Promise<Platform> {
  const logger = options.logger ?? createLogger({ level: config.LOG_LEVEL, service: options.service });
  if (options.migrate) await ensureDatabase(config.DATABASE_URL);
  const db = createDb(config.DATABASE_URL, { poolMax: options.poolMax, applicationName: `intake-${options.service}` });
  if (options.migrate) await migrate(db);
  const redis = new Redis(config.REDIS_URL, {
    lazyConnect: false,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    // Off: ioredis would hold every command until the next setImmediate, and ingest's rate limit,
    // which already gathers a turn's posts and sends them from a setImmediate of its own, then
    // waited one more turn of the event loop per post (see rules/rate-limit.ts in ingest).
    enableAutoPipelining: false,
    connectTimeout: 2000,
    retryStrategy: (n) => Math.min(n * 200, 2000),
  });
  redis.on('error', (err) => logger.debug({ err }, 'redis connection error'));
  const nats = await connectNats(config.NATS_URL, config.NATS_PREFIX, `intake-${options.service}`, {
    replicas: config.NATS_STREAM_REPLICAS,
    maxStreamBytes: config.NATS_STREAM_MAX_BYTES,
  });
  await ensureStreams(nats).catch((err) => logger.warn({ err }, 'could not provision JetStream streams yet'));
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

export async function closePlatform(platform: Platform): Promise<void> {
  await platform.nats.nc.drain().catch(() => platform.nats.nc.close());
  platform.redis.disconnect();
  await platform.db.destroy();
}

/** A long-running part of a service (a consumer, the outbox relay) that stops cleanly on shutdown. */
export interface Worker {
  stop(): Promise<void>;
}

/** Listens, and on SIGTERM/SIGINT drains: stop accepting, finish in-flight requests, then messages, close NATS and the pool. */
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
      platform.logger.info('draining: no new connections, finishing in-flight work');
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

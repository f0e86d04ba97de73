import type Koa from 'koa';
import Router from '@koa/router';
import { loadConfig, usesDevelopmentSecretsKey, type Config } from '../base/config';
import { mailWarning } from '../base/mailer';
import { createPlatform, serve, type Platform, type Worker } from './platform';
import { ensureStreams } from '../messaging/streams';
import { startOutbox, type Outbox } from '../messaging/outbox';
import { mountProbes } from './health';
import { baseApp } from '../http/app';
import { mountRoutes, type RouteList } from '../http/route';
import { startTelemetry } from '../telemetry/sdk';
import { observeBacklogs } from './backlogs';

/**
 * What each of the four services exports: its routes, its per-process state, its app and its
 * background workers. `D` is what its route handlers get (`handler(ctx, input, deps)`).
 */
export interface ServiceModule<D = unknown> {
  name: 'ingest' | 'management' | 'delivery' | 'usage';
  /** True when the service writes outbox events, so its process runs an outbox relay. */
  publishesEvents: boolean;
  /**
   * The public routes as values, with the schemas that validate them and document them in the
   * OpenAPI. Listing them composes nothing; they depend on the configuration at most (management's
   * problem pages live under PROBLEMS_URL's path).
   */
  routes(settings: { config: Config }): RouteList<D>;
  /**
   * The per-process state its handlers get as `deps` (a cache, a writer, a limiter), composed where
   * the service's app is built for a process; a service that keeps none hands on the platform.
   */
  compose(platform: Platform): D;
  /** Background work: JetStream consumers and timers. */
  startWorkers(platform: Platform): Promise<Worker[]>;
  /** Extra middleware or routes that are not JSON API routes (pages, files, docs). */
  extend?(app: Koa, router: Router, platform: Platform): void;
  /** Koa options for this service's app. */
  cors?: boolean;
}

export interface ServiceState {
  draining: boolean;
  /** Whether the process's workers run yet (a standalone service starts them once NATS answers); /readyz shows it. */
  workers?: 'waiting for NATS' | 'started';
}

/** Builds the service's Koa app from its routes: problems, CORS, probes, routes. No listening, no globals. */
export function buildServiceApp<D>(
  module: ServiceModule<D>,
  platform: Platform,
  state: ServiceState = { draining: false },
): Koa {
  const app = baseApp(platform, { cors: module.cors });
  const router = new Router();
  mountProbes(router, platform, state);
  mountRoutes(router, module.routes(platform), { db: platform.db, deps: module.compose(platform) });
  module.extend?.(app, router, platform);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** The outbox relay of a process that publishes events, over the platform's database and NATS. */
export function startPlatformRelay(platform: Platform, options: { pollMs?: number } = {}): Outbox {
  const { db, nats, logger, config } = platform;
  // LISTEN needs a session of its own on Postgres itself (a transaction-mode pooler does not carry it).
  return startOutbox({ db, nats, logger, relay: { databaseUrl: config.DATABASE_DIRECT_URL, pollMs: options.pollMs } });
}

/** What the process of one service runs: its app, its workers, and the outbox relay when it publishes events. */
export async function composeStandalone<D>(
  module: ServiceModule<D>,
  platform: Platform,
  state: ServiceState,
): Promise<{ app: Koa; workers: Worker[] }> {
  return { app: buildServiceApp(module, platform, state), workers: await startServiceWorkers(module, platform) };
}

/** A service's workers, and the outbox relay when it publishes events. */
async function startServiceWorkers<D>(module: ServiceModule<D>, platform: Platform): Promise<Worker[]> {
  const workers = await module.startWorkers(platform);
  if (module.publishesEvents) workers.push(startPlatformRelay(platform));
  return workers;
}

/**
 * `node dist/main.js` of one service, as the chart runs it. It listens at once, ready on Postgres alone (`/readyz`),
 * and starts its workers (consumers, pumps, the outbox relay) once NATS answers: a post accepted before then waits in
 * the outbox and is published when NATS comes.
 */
export async function runStandalone<D>(module: ServiceModule<D>): Promise<void> {
  const config = loadConfig(process.env);
  const platform = await createPlatform(config, { service: module.name, natsInBackground: true });
  warnAboutDefaults(platform);
  const state: ServiceState = { draining: false, workers: 'waiting for NATS' };
  const app = buildServiceApp(module, platform, state);
  const workers: Worker[] = [
    telemetryWorker(platform, { serviceName: `intake-${module.name}`, publishesEvents: module.publishesEvents }),
  ];
  const { url } = await serve({
    platform,
    handler: app.callback(),
    workers,
    port: config.PORT,
    state,
    name: module.name,
  });
  platform.logger.info({ url }, `intake ${module.name} listening on ${url}`);
  exitWhenNatsRefuses(platform);
  startWorkersOnceNats(platform, state, workers, () => startServiceWorkers(module, platform));
}

/** Credentials or a certificate NATS refuses are a setting to fix: stop, saying which (the pod restarts, visibly). */
export function exitWhenNatsRefuses(platform: Platform): void {
  platform.nats.connected.catch((err: unknown) => {
    platform.logger.fatal({ err }, (err as Error).message);
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  });
}

/**
 * Starts a process's workers (`start`: consumers, pumps, the outbox relay, threads) once NATS has answered, into
 * `workers` (which shutdown stops), and marks `state.workers`; a start that fails (a stream not there yet) is tried
 * again every 2 s, so `start` stops what it started before failing; nothing starts once draining.
 */
export function startWorkersOnceNats(
  platform: Platform,
  state: ServiceState,
  workers: Worker[],
  start: () => Promise<Worker[]>,
): void {
  void (async () => {
    const refused = await platform.nats.connected.then(
      () => false,
      () => true,
    );
    if (refused) return; // exitWhenNatsRefuses stops the process
    while (!state.draining) {
      try {
        await ensureStreams(platform.nats);
        const started = await start();
        if (state.draining) await Promise.allSettled(started.map((w) => w.stop()));
        else workers.push(...started);
        state.workers = 'started';
        platform.logger.info('NATS answered: workers started');
        return;
      } catch (err) {
        platform.logger.warn({ err }, 'could not start the workers yet; retrying in 2 s');
        await new Promise((resolve) => setTimeout(resolve, 2000).unref());
      }
    }
  })();
}

/** The start-up warnings of a process running on a default it should not keep: the development key, no SMTP_URL. */
export function warnAboutDefaults(platform: Platform): void {
  if (usesDevelopmentSecretsKey(platform.config))
    platform.logger.warn('SECRETS_KEY is not set: using the development key; set it before storing real secrets');
  const mail = mailWarning(platform.config);
  if (mail) platform.logger.warn(mail);
}

/**
 * Telemetry for a running process: starts the SDK if `@intake/shared/register` did not (spans of
 * modules loaded earlier are then missing), observes the JetStream consumer and outbox backlogs,
 * and flushes everything on shutdown.
 */
export function telemetryWorker(
  platform: Platform,
  options: { serviceName: string; publishesEvents: boolean },
): Worker {
  const telemetry = startTelemetry({ serviceName: options.serviceName, env: process.env });
  const stopObserving = telemetry.enabled
    ? observeBacklogs({ nats: platform.nats, db: options.publishesEvents ? platform.db : undefined })
    : undefined;
  if (telemetry.enabled)
    platform.logger.info({ service_name: telemetry.serviceName }, `OpenTelemetry: ${telemetry.destination}`);
  return {
    async stop() {
      stopObserving?.();
      await telemetry.shutdown();
    },
  };
}

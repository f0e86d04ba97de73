import type Koa from 'koa';
import Router from '@koa/router';
import { loadConfig, usesDevelopmentSecretsKey } from '../base/config';
import { createPlatform, serve, type Platform, type Worker } from './platform';
import { startOutboxRelay, type OutboxRelay } from '../messaging/outbox';
import { mountProbes, type Dependency } from './health';
import { baseApp } from '../http/app';
import { mountRoutes, type RouteDef } from '../http/route';
import { startTelemetry } from '../base/telemetry';
import { observeBacklogs } from './backlogs';

/** What each of the four services exports: its routes, its app and its background workers. */
export interface ServiceModule {
  name: 'ingest' | 'management' | 'delivery' | 'usage';
  /** Dependencies the service cannot work without (its readiness probe checks them). */
  needs: Dependency[];
  /** True when the service writes outbox events, so its process runs an outbox relay. */
  publishesEvents: boolean;
  /** The public routes, with the schemas that validate them and document them in the OpenAPI. */
  routes(platform: Platform): RouteDef[];
  /** Background work: JetStream consumers and timers. */
  startWorkers(platform: Platform): Promise<Worker[]>;
  /** Extra middleware or routes that are not JSON API routes (pages, files, docs). */
  extend?(app: Koa, router: Router, platform: Platform): void;
  /** Koa options for this service's app. */
  cors?: boolean;
}

export interface ServiceState {
  draining: boolean;
}

/** Builds the service's Koa app from its routes: problems, CORS, probes, routes. No listening, no globals. */
export function buildServiceApp(
  module: ServiceModule,
  platform: Platform,
  state: ServiceState = { draining: false },
): Koa {
  const app = baseApp(platform, { cors: module.cors });
  const router = new Router();
  mountProbes(router, platform, module.needs, state);
  mountRoutes(router, module.routes(platform), platform);
  module.extend?.(app, router, platform);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** The outbox relay of a process that publishes events, over the platform's database and NATS. */
export function startPlatformRelay(platform: Platform, options: { pollMs?: number } = {}): OutboxRelay {
  return startOutboxRelay({
    db: platform.db,
    databaseUrl: platform.config.DATABASE_URL,
    nats: platform.nats,
    logger: platform.logger,
    pollMs: options.pollMs,
  });
}

/** `node dist/main.js` of one service, as the chart runs it. */
export async function runStandalone(module: ServiceModule): Promise<void> {
  const config = loadConfig(process.env);
  const platform = await createPlatform(config, { service: module.name });
  if (usesDevelopmentSecretsKey(config))
    platform.logger.warn('SECRETS_KEY is not set: using the development key; set it before storing real secrets');
  const state: ServiceState = { draining: false };
  const app = buildServiceApp(module, platform, state);
  const workers = await module.startWorkers(platform);
  if (module.publishesEvents) workers.push(startPlatformRelay(platform));
  workers.push(
    telemetryWorker(platform, { serviceName: `intake-${module.name}`, publishesEvents: module.publishesEvents }),
  );
  const { url } = await serve({
    platform,
    handler: app.callback(),
    workers,
    port: config.PORT,
    state,
    name: module.name,
  });
  platform.logger.info({ url }, `intake ${module.name} listening on ${url}`);
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
    platform.logger.info(
      { service_name: telemetry.serviceName },
      'OpenTelemetry traces and metrics are exported over OTLP',
    );
  return {
    async stop() {
      stopObserving?.();
      await telemetry.shutdown();
    },
  };
}

import '@intake/shared/register';
import type http from 'node:http';
import path from 'node:path';
import { loadConfig } from '@intake/shared/base';
import {
  buildServiceApp,
  createPlatform,
  exitWhenNatsRefuses,
  serve,
  startBackgroundThread,
  startWorkersOnceNats,
  telemetryWorker,
  warnAboutDefaults,
  type ServiceModule,
  type Platform,
  type ServiceState,
  type Worker,
} from '@intake/shared/runtime';
import { ingestService } from '@intake/ingest';
import { deliveryService } from '@intake/delivery';
import { usageService } from '@intake/usage';
import { managementService } from '@intake/management';

/** Which service answers a path: exactly the cluster ingress's rules (`/v1/f/*` ingest, `/v1/usage` usage, the rest management). */
export function routeFor(path: string): ServiceModule['name'] {
  if (path.startsWith('/v1/f/')) return 'ingest';
  if (path === '/v1/usage' || path.startsWith('/v1/usage/') || path.startsWith('/v1/usage?')) return 'usage';
  return 'management';
}

/**
 * `npm start`: all four services in one process on one port, against local Postgres, NATS and Redis. Like a service's
 * process it listens at once, ready on Postgres alone, and starts its workers (ingest's here, the relay and delivery on
 * a background thread, usage and management's sweepers on a bookkeeping thread) once NATS answers: a post accepted
 * before then waits in the outbox.
 */
export async function startAllInOne(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ url: string; shutdown(): Promise<void> }> {
  const config = loadConfig(env);
  const platform = await createPlatform(config, { service: 'all-in-one', migrate: true, natsInBackground: true });
  warnAboutDefaults(platform);
  const state: ServiceState = { draining: false, workers: 'waiting for NATS' };
  const modules = {
    ingest: ingestService,
    management: managementService,
    delivery: deliveryService,
    usage: usageService,
  };
  const handlers = Object.fromEntries(
    Object.entries(modules).map(([name, m]) => [name, buildServiceApp(m, platform, state).callback()]),
  ) as unknown as Record<ServiceModule['name'], http.RequestListener>;
  const workers: Worker[] = [telemetryWorker(platform, { serviceName: 'intake', publishesEvents: true })];
  const handler: http.RequestListener = (req, res) => handlers[routeFor(req.url ?? '/')](req, res);
  const { url, shutdown } = await serve({ platform, handler, workers, port: config.PORT, state, name: 'all-in-one' });
  platform.logger.info(
    { url: config.PUBLIC_BASE_URL, port: config.PORT },
    `Intake is ready on ${config.PUBLIC_BASE_URL} (listening on ${url})`,
  );
  exitWhenNatsRefuses(platform);
  startWorkersOnceNats(platform, state, workers, () => startAllInOneWorkers(platform, env));
  return { url, shutdown };
}

/**
 * Ingest's workers (its per-process state) stay on the main thread; the relay and delivery's consumers run on a
 * background thread, on the second core, and usage's consumer and management's sweepers on a bookkeeping thread, apart
 * from the webhooks' way (docs/decisions/operations.md#processes-and-threads). A part that cannot start stops those before it.
 */
async function startAllInOneWorkers(platform: Platform, env: NodeJS.ProcessEnv): Promise<Worker[]> {
  const started: Worker[] = [];
  try {
    started.push(...(await ingestService.startWorkers(platform)));
    started.push(
      await startBackgroundThread({
        entry: path.join(__dirname, 'all-in-one-background.js'),
        service: 'all-in-one-background',
        logger: platform.logger,
        env,
      }),
    );
    started.push(
      await startBackgroundThread({
        entry: path.join(__dirname, 'all-in-one-bookkeeping.js'),
        service: 'all-in-one-bookkeeping',
        thread: 'bookkeeping',
        logger: platform.logger,
        env,
      }),
    );
    return started;
  } catch (err) {
    await Promise.allSettled(started.map((w) => w.stop()));
    throw err;
  }
}

if (require.main === module) {
  startAllInOne().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}

import type { Platform, ServiceModule } from '@intake/shared';
import { composeIngest, type IngestDeps, type IngestOptions } from './compose';
import { ingestRoutes } from './routes/ingest.routes';
import { submissionMetrics } from './routes/submission-metrics';

export { composeIngest, type IngestDeps, type IngestOptions } from './compose';

/**
 * The ingest service (`POST /v1/f/:slug`) of one process. Its per-process state (`IngestDeps`:
 * form cache, group writer, unsettled files) is composed once, when its routes are built on a
 * platform, and handed to the routes and to the shutdown worker; built on another platform (tests,
 * one after another), it composes afresh. A test that needs the state calls `deps(platform)`
 * (the state of the app last built on that platform).
 */
export function createIngestService(
  options: IngestOptions = {},
): ServiceModule & { deps(platform: Platform): IngestDeps } {
  let composed: IngestDeps | undefined;
  const depsOf = (platform: Platform): IngestDeps =>
    composed?.platform === platform ? composed : (composed = composeIngest(platform, options));
  return {
    name: 'ingest',
    needs: ['postgres', 'nats', 'redis'],
    publishesEvents: true,
    cors: true,
    deps(platform) {
      if (composed?.platform !== platform) throw new Error('no ingest app was built on this platform');
      return composed;
    },
    routes: (platform) => ingestRoutes(depsOf(platform)),
    // On shutdown: the events in flight published, then one last try at the files of posts of
    // unknown outcome (those not settled stay in storage).
    startWorkers: async (platform) => {
      const { unsettled, formChanges, events } = depsOf(platform);
      return [
        {
          async stop() {
            formChanges.stop();
            await events?.stop();
            await unsettled.settle(0);
            unsettled.stop();
          },
        },
      ];
    },
    // Before the router, inside the problem middleware: submissions by outcome and ingest latency.
    extend: (app) => void app.use(submissionMetrics),
  };
}

export const ingestService = createIngestService();

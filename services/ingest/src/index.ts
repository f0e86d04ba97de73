import type { Platform, ServiceModule } from '@intake/shared';
import { composeIngest, type IngestProcess } from './compose';
import { ingestRoutes } from './routes/ingest.routes';
import { submissionMetrics } from './routes/submission-metrics';

export { composeIngest, type IngestProcess } from './compose';

/**
 * The ingest service (`POST /v1/f/:slug`) of one process. Its per-process state (`IngestProcess`:
 * form cache, group writer, unsettled files) is composed once, when its routes are built on a
 * platform, and handed to the routes and to the shutdown worker; built on another platform (tests,
 * one after another), it composes afresh. A test that needs the state calls `process(platform)`
 * (the state of the app last built on that platform).
 */
export function createIngestService(): ServiceModule & { process(platform: Platform): IngestProcess } {
  let composed: IngestProcess | undefined;
  const processOf = (platform: Platform): IngestProcess =>
    composed?.platform === platform ? composed : (composed = composeIngest(platform));
  return {
    name: 'ingest',
    needs: ['postgres', 'nats', 'redis'],
    publishesEvents: true,
    cors: true,
    process(platform) {
      if (composed?.platform !== platform) throw new Error('no ingest app was built on this platform');
      return composed;
    },
    routes: (platform) => ingestRoutes(processOf(platform)),
    // On shutdown: one last try at the files of posts of unknown outcome (those not settled stay in storage).
    startWorkers: async (platform) => {
      const { unsettled } = processOf(platform);
      return [
        {
          async stop() {
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

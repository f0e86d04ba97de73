import type { ServiceModule } from '@intake/shared';
import { ingestRoutes } from './routes/ingest.routes';
import { submissionMetrics } from './routes/submission-metrics';
import { unsettledFilesOf } from './domain/unsettled-files';

/** The ingest service: `POST /v1/f/:slug`. */
export const ingestService: ServiceModule = {
  name: 'ingest',
  needs: ['postgres', 'nats', 'redis'],
  publishesEvents: true,
  cors: true,
  routes: ingestRoutes,
  // On shutdown: one last try at the files of posts of unknown outcome (those not settled stay in storage).
  startWorkers: async (platform) => [
    {
      async stop() {
        await unsettledFilesOf(platform).settle(0);
        unsettledFilesOf(platform).stop();
      },
    },
  ],
  // Before the router, inside the problem middleware: submissions by outcome and ingest latency.
  extend: (app) => void app.use(submissionMetrics),
};

import type { ServiceModule } from '@intake/shared';
import { ingestRoutes } from './routes/ingest.routes';
import { submissionMetrics } from './routes/submission-metrics';

/** The ingest service: `POST /v1/f/:slug`. */
export const ingestService: ServiceModule = {
  name: 'ingest',
  needs: ['postgres', 'nats', 'redis'],
  publishesEvents: true,
  cors: true,
  routes: ingestRoutes,
  startWorkers: async () => [],
  // Before the router, inside the problem middleware: submissions by outcome and ingest latency.
  extend: (app) => void app.use(submissionMetrics),
};

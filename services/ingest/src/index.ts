import type { ServiceModule } from '@intake/shared';
import { ingestRoutes } from './routes/ingest.routes';

/** The ingest service: `POST /v1/f/:slug`. */
export const ingestService: ServiceModule = {
  name: 'ingest',
  needs: ['postgres', 'nats', 'redis'],
  publishesEvents: true,
  cors: true,
  routes: ingestRoutes,
  startWorkers: async () => [],
};

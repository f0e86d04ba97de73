import type { ServiceModule } from '@intake/shared';

/** The ingest service. */
export const ingestService: ServiceModule = {
  name: 'ingest',
  needs: ["postgres", "nats", "redis"],
  publishesEvents: true,
  cors: true,
  routes: () => [],
  startWorkers: async () => [],
};

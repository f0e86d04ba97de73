import type { ServiceModule } from '@intake/shared';

/** The usage service. */
export const usageService: ServiceModule = {
  name: 'usage',
  needs: ["postgres", "nats"],
  publishesEvents: false,
  cors: false,
  routes: () => [],
  startWorkers: async () => [],
};

import type { ServiceModule } from '@intake/shared';

/** The delivery service. */
export const deliveryService: ServiceModule = {
  name: 'delivery',
  needs: ["postgres", "nats"],
  publishesEvents: false,
  cors: false,
  routes: () => [],
  startWorkers: async () => [],
};

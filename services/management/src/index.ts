import type { ServiceModule, Platform, RouteDef } from '@intake/shared';
import { apiKeyRoutes } from './routes/api-keys.routes';
import { healthRoutes } from './routes/health.routes';
import { openApiDocument } from './openapi';
import { webhookRoutes } from './routes/webhooks.routes';
import { deliveryRoutes } from './routes/deliveries.routes';

function managementRoutes(platform: Platform): RouteDef[] {
  return [...healthRoutes(platform), ...apiKeyRoutes(platform), ...webhookRoutes(platform), ...deliveryRoutes(platform)];
}

/** The management service: forms, submissions, webhooks, deliveries, API keys, health, OpenAPI, console. */
export const managementService: ServiceModule = {
  name: 'management',
  needs: ['postgres', 'nats'],
  publishesEvents: true,
  routes: managementRoutes,
  startWorkers: async () => [],
  extend(_app, router, platform) {
    let document: Record<string, unknown> | undefined;
    router.get('/openapi', (ctx) => {
      document ??= openApiDocument(platform, managementRoutes(platform));
      ctx.body = document;
    });
  },
};

export { createAccount } from './domain/accounts';
export { runAdmin } from './cli/admin';

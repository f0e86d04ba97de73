import { startRetentionSweeper, type ServiceModule, type Platform, type RouteDef } from '@intake/shared';
import { apiKeyRoutes } from './routes/api-keys.routes';
import { healthRoutes } from './routes/health.routes';
import { formRoutes } from './routes/forms.routes';
import { docsRoutes } from './routes/docs.routes';
import { submissionRoutes } from './routes/submissions.routes';
import { fileRoutes } from './routes/files.routes';
import { webhookRoutes } from './routes/webhooks.routes';
import { deliveryRoutes } from './routes/deliveries.routes';
import { openApiDocument } from './openapi';
import { sessionRoutes } from './routes/sessions.routes';
import { consoleSupportRoutes } from './routes/console-support.routes';
import { mountConsole } from './routes/console-page';
import { startSessionSweeper } from './domain/session-sweeper';

function managementRoutes(platform: Platform): RouteDef[] {
  return [
    ...healthRoutes(platform),
    ...apiKeyRoutes(platform),
    ...formRoutes(platform),
    ...submissionRoutes(platform),
    ...fileRoutes(platform),
    ...webhookRoutes(platform),
    ...deliveryRoutes(platform),
    ...sessionRoutes(platform),
    ...consoleSupportRoutes(platform),
    ...docsRoutes(platform, () => managementRoutes(platform)),
  ];
}

/** The management service: forms, submissions, webhooks, deliveries, API keys, health, OpenAPI, docs, problem types. */
export const managementService: ServiceModule = {
  name: 'management',
  needs: ['postgres', 'nats'],
  publishesEvents: true,
  routes: managementRoutes,
  // Management always runs, so it keeps the bookkeeping tables from growing (see shared/src/runtime/retention.ts).
  startWorkers: async (platform) => [startRetentionSweeper(platform), startSessionSweeper(platform)],
  // The web console at /console (built into dist/console by `npm run build`); / redirects there.
  extend: mountConsole,
};

/** The one OpenAPI document of the four services (what `GET /openapi` serves). */
export function openApi(platform: Platform): Record<string, unknown> {
  return openApiDocument(platform, managementRoutes(platform));
}

export { createAccount } from './domain/accounts';
export { runAdmin } from './cli/admin';

import { buildOpenApi, type Config, type RouteSpec } from '@intake/shared';
import { ingestService } from '@intake/ingest';
import { usageService } from '@intake/usage';
import { deliveryService } from '@intake/delivery';

/**
 * The one OpenAPI 3.1 document for every public endpoint of the four services, built from their
 * route definitions. It reads the definitions only: no service's per-process state is composed.
 */
export function openApiDocument(config: Config, managementRoutes: readonly RouteSpec[]): Record<string, unknown> {
  const settings = { config };
  const routes = [
    ...ingestService.routes(settings),
    ...managementRoutes,
    ...usageService.routes(settings),
    ...deliveryService.routes(settings),
  ];
  return buildOpenApi({
    title: 'Intake API',
    version: '1.0.0',
    description:
      'Form ingest, management, webhooks and usage. Errors are RFC 7807 problem documents whose `type` is `{PROBLEMS_URL}/<slug>`.',
    serverUrl: config.PUBLIC_BASE_URL,
    problemsUrl: config.PROBLEMS_URL,
    routes,
  });
}

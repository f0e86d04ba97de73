import { buildOpenApi, type Platform, type RouteDef } from '@intake/shared';
import { ingestService } from '@intake/ingest';
import { usageService } from '@intake/usage';
import { deliveryService } from '@intake/delivery';

/** The one OpenAPI 3.1 document for every public endpoint of the four services, built from their route definitions. */
export function openApiDocument(platform: Platform, managementRoutes: RouteDef[]): Record<string, unknown> {
  const routes = [
    ...ingestService.routes(platform),
    ...managementRoutes,
    ...usageService.routes(platform),
    ...deliveryService.routes(platform),
  ];
  return buildOpenApi({
    title: 'Intake API',
    version: '1.0.0',
    description:
      'Form ingest, management, webhooks and usage. Errors are RFC 7807 problem documents whose `type` is `{PROBLEMS_URL}/<slug>`.',
    serverUrl: platform.config.PUBLIC_BASE_URL,
    problemsUrl: platform.config.PROBLEMS_URL,
    routes,
  });
}

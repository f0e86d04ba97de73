#!/usr/bin/env node
/**
 * `npm run build:openapi` (after `tsc -b`): writes the one OpenAPI document of the four services, built from their
 * route definitions (the compiled dist of each), to management's dist/openapi.json, which management serves at
 * GET /openapi with the configuration's server URL and problem-type paths (services/management/src/platform/openapi.ts).
 * Management does not carry the other services: only this build step reads all four.
 *
 * Required in Jest, it is what management's platform/built-openapi.ts is mapped to (jest.config.js): the same
 * document, built from the services' sources, so a test serves the routes it runs.
 */
const fs = require('node:fs');

/**
 * The document for the build settings: every service's routes, ingest's first, as the document lists them. The
 * services are required here, not above: in Jest, management's own modules require this one while they load.
 */
function builtOpenApi() {
  const { loadConfig } = require('@intake/shared/base');
  const { ingestService } = require('@intake/ingest');
  const { usageService } = require('@intake/usage');
  const { deliveryService } = require('@intake/delivery');
  const { managementService, openApiDocument, BUILD_SETTINGS } = require('@intake/management');
  const settings = { config: loadConfig(BUILD_SETTINGS) };
  const routes = [ingestService, managementService, usageService, deliveryService].flatMap((s) => s.routes(settings));
  return openApiDocument(settings.config, routes);
}

module.exports = { builtOpenApi };

if (require.main === module) {
  const { OPENAPI_FILE } = require('@intake/management');
  fs.writeFileSync(OPENAPI_FILE, JSON.stringify(builtOpenApi()));
}

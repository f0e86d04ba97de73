import { readFileSync } from 'node:fs';
import { OPENAPI_FILE } from './openapi';

/**
 * The document the build wrote (`OPENAPI_FILE`). Jest maps this module to scripts/openapi-document.js, which builds
 * the same document from the services' sources, so a test serves the routes it runs.
 */
export function builtOpenApi(): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${OPENAPI_FILE} cannot be read; \`npm run build:openapi\` writes it after \`tsc -b\``, {
      cause: err,
    });
  }
}

import path from 'node:path';
import { type Config } from '@intake/shared/base';
import { buildOpenApi, type RouteSpec } from '@intake/shared/http';
import { problemsPath } from './docs.routes';

/**
 * The one OpenAPI 3.1 document for every public endpoint of the four services is a build artefact: after `tsc -b`,
 * scripts/openapi-document.js builds it from the four services' route definitions (`openApiDocument`, with
 * `BUILD_SETTINGS`) and writes it here, so management serves it without carrying the other services.
 */
export const OPENAPI_FILE = path.join(__dirname, '..', '..', 'dist', 'openapi.json');

/**
 * The settings the file is built with. What of the document depends on the configuration is filled in when it is
 * served (`servedOpenApi`): the server URL (PUBLIC_BASE_URL) and the paths of the problem-type pages (PROBLEMS_URL's
 * path). Nothing else does: the routes' schemas are constants.
 */
export const BUILD_SETTINGS = { PUBLIC_BASE_URL: 'http://localhost', PROBLEMS_URL: 'http://localhost/problems' };

/** The document of `routes` (every service's, in the order the document lists them) for `config`. */
export function openApiDocument(config: Config, routes: readonly RouteSpec[]): Record<string, unknown> {
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

/**
 * The built document as `config` serves it: its server is PUBLIC_BASE_URL and the problem-type pages sit under
 * PROBLEMS_URL's path, each path keeping its place, so it is what `openApiDocument` makes for `config`.
 */
export function openApiFor(built: Record<string, unknown>, config: Config): Record<string, unknown> {
  const from = problemsPath(BUILD_SETTINGS.PROBLEMS_URL);
  const to = problemsPath(config.PROBLEMS_URL);
  const moved = (p: string) => (p === from || p.startsWith(`${from}/`) ? `${to}${p.slice(from.length)}` : p);
  const paths = Object.entries(built['paths'] as Record<string, unknown>).map(([p, item]) => [moved(p), item]);
  return { ...built, servers: [{ url: config.PUBLIC_BASE_URL }], paths: Object.fromEntries(paths) };
}

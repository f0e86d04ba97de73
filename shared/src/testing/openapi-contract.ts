import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';
import { buildOpenApi } from '../http/openapi';
import type { RouteSpec } from '../http/route';
import { TIME_ZONE_FORMAT } from '../contracts/time';

/**
 * Checks responses seen in route tests against the served OpenAPI document: the status must be
 * documented for the operation (or fall under `default`), the content type must be one it lists,
 * and a JSON body must validate (ajv, JSON Schema 2020-12) against the documented schema.
 * The management tests' `api()`, the usage tests' `api()` and the ingest tests' `poster()` run it on
 * every response, so every route test is also a contract test.
 */
export type OpenApiDoc = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }>
  >;
  components?: unknown;
};

/** The OpenAPI document of `routes` alone, with placeholder title, version and URLs (for tests of the generator). */
export function openApiOf(routes: readonly RouteSpec[]): Record<string, unknown> {
  return buildOpenApi({
    title: 't',
    version: '1',
    description: 'd',
    serverUrl: 'http://localhost',
    problemsUrl: 'http://localhost/problems',
    routes,
  });
}

const documents = new Map<string, Promise<OpenApiDoc>>();
const validators = new WeakMap<OpenApiDoc, Map<string, ValidateFunction>>();

/**
 * The document of the server at `baseUrl`: the one registered for it (a service that does not
 * serve `/openapi` itself, e.g. ingest or usage, is checked against the one document that the
 * management service serves for all four), else the one it serves at `${baseUrl}/openapi`, fetched
 * once per server.
 */
export function registerOpenApi(baseUrl: string, document: Record<string, unknown>): void {
  documents.set(baseUrl, Promise.resolve(document as OpenApiDoc));
}

export function servedOpenApi(baseUrl: string): Promise<OpenApiDoc> {
  let doc = documents.get(baseUrl);
  if (!doc) {
    doc = fetch(`${baseUrl}/openapi`).then(async (res) => {
      if (res.status !== 200) throw new Error(`GET /openapi answered ${res.status}`);
      return (await res.json()) as OpenApiDoc;
    });
    documents.set(baseUrl, doc);
  }
  return doc;
}

/** The documented path template that matches a concrete path, preferring the one with fewest parameters. */
export function matchPath(doc: OpenApiDoc, path: string): string | undefined {
  const candidates = Object.keys(doc.paths).filter((template) =>
    new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
  );
  return candidates.sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))[0];
}

function validatorFor(doc: OpenApiDoc, key: string, schema: unknown): ValidateFunction {
  let cache = validators.get(doc);
  if (!cache) {
    cache = new Map();
    validators.set(doc, cache);
  }
  let validate = cache.get(key);
  if (!validate) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('ajv-formats')(ajv);
    ajv.addFormat(TIME_ZONE_FORMAT.name, TIME_ZONE_FORMAT.validate);
    ajv.addSchema({ $id: 'openapi:components', components: doc.components });
    const resolved = JSON.parse(
      JSON.stringify(schema).replace(/"#\/components\//g, '"openapi:components#/components/'),
    );
    validate = ajv.compile(resolved);
    cache.set(key, validate);
  }
  return validate;
}

/** Problems with one response against the document; empty when it fits (or the path is not documented at all). */
export function contractViolations(
  doc: OpenApiDoc,
  seen: { method: string; path: string; status: number; contentType: string | null; body: unknown },
): string[] {
  const template = matchPath(doc, seen.path.split('?')[0] as string);
  if (!template) return [];
  const operation = doc.paths[template]?.[seen.method.toLowerCase()];
  if (!operation) return seen.status === 405 ? [] : [`${seen.method} ${template} is served but not documented`];
  const where = `${seen.method} ${template} → ${seen.status}`;
  const response = operation.responses[String(seen.status)] ?? operation.responses['default'];
  if (!response) return [`${where}: status not documented`];
  if (seen.body === undefined || seen.body === '') return [];
  const type = (seen.contentType ?? '').split(';')[0]?.trim() ?? '';
  const content = response.content ?? {};
  const media = content[type] ?? content['*/*'];
  if (!media)
    return [`${where}: content type ${type} not documented (documented: ${Object.keys(content).join(', ') || 'none'})`];
  if (!/json/.test(type) || media.schema === undefined) return [];
  const validate = validatorFor(doc, `${template} ${seen.method} ${seen.status} ${type}`, media.schema);
  if (validate(seen.body)) return [];
  return [
    `${where}: body does not fit the documented schema: ${JSON.stringify(validate.errors)} in ${JSON.stringify(seen.body).slice(0, 500)}`,
  ];
}

/** Throws when a response does not fit the document served by `baseUrl`. */
export async function expectMatchesOpenApi(
  baseUrl: string,
  seen: { method: string; path: string; status: number; contentType: string | null; body: unknown },
): Promise<void> {
  const problems = contractViolations(await servedOpenApi(baseUrl), seen);
  if (problems.length) throw new Error(`Response does not match the OpenAPI document:\n${problems.join('\n')}`);
}

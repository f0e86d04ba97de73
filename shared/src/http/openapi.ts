import { Type, type TSchema } from '@sinclair/typebox';
import { PROBLEMS, type ProblemSlug } from '../contracts/problems';
import type { ResponseDef, RouteSpec } from './route';
import { requiredRole } from '../auth/roles';

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ format: 'uri', description: '`{PROBLEMS_URL}/<slug>`; branch on it or its trailing slug' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    limit: Type.Optional(Type.Integer({ description: 'quota-exceeded only: the monthly allowance' })),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: 'validation-failed only: one entry per bad field',
      }),
    ),
  },
  { $id: 'Problem', additionalProperties: true },
);

function strip(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key === '$id' ? undefined : value)));
}

function parametersOf(def: RouteSpec): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ['path', def.params],
    ['query', def.query],
  ] as const) {
    if (!schema) continue;
    const required = new Set(schema.required ?? []);
    for (const [name, prop] of Object.entries(schema.properties)) {
      const p = strip(prop as TSchema) as Record<string, unknown>;
      const { description, ...rest } = p;
      out.push({
        name,
        in: where,
        // A parameter with a default is filled in by validation: a client may leave it out.
        required: where === 'path' || (required.has(name) && !('default' in p)),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  }
  return out;
}

/** One documented answer: its description, headers and content types, each with its schema. */
function responseOf(res: ResponseDef): unknown {
  return {
    description: res.description,
    ...(res.headers
      ? {
          headers: Object.fromEntries(
            Object.entries(res.headers).map(([h, v]) => [h, { description: v.description, schema: strip(v.schema) }]),
          ),
        }
      : {}),
    ...(res.schema || res.alternatives
      ? {
          content: {
            ...(res.schema ? { [res.contentType ?? 'application/json']: { schema: strip(res.schema) } } : {}),
            ...Object.fromEntries(
              Object.entries(res.alternatives ?? {}).map(([type, schema]) => [type, { schema: strip(schema) }]),
            ),
          },
        }
      : {}),
  };
}

/**
 * The problems a route can answer with: its own, those of management auth, of validation and of
 * a JSON body, grouped by status (a status the route documents itself keeps its own answer).
 */
function problemResponses(def: RouteSpec, responses: Record<string, unknown>): void {
  const problemSlugs = new Set<ProblemSlug>(def.problems ?? []);
  if (def.auth === 'management')
    ['unauthorized', 'invalid-key', 'insufficient-scope', 'csrf-failed', 'forbidden'].forEach((s) =>
      problemSlugs.add(s as ProblemSlug),
    );
  if (def.body || def.params || def.query) problemSlugs.add('validation-failed');
  if (def.body) problemSlugs.add('bad-body');
  const byStatus = new Map<number, ProblemSlug[]>();
  for (const slug of problemSlugs)
    byStatus.set(PROBLEMS[slug].status, [...(byStatus.get(PROBLEMS[slug].status) ?? []), slug]);
  const content = {
    'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
    ...Object.fromEntries(
      Object.entries(def.problemAlternatives ?? {}).map(([type, schema]) => [type, { schema: strip(schema) }]),
    ),
  };
  for (const [status, slugs] of byStatus) {
    if (responses[status]) continue;
    responses[status] = { description: `Problem: ${slugs.map((s) => `\`${s}\``).join(', ')}`, content };
  }
  responses['default'] = { description: 'Any other problem', content };
}

/** The request body: a JSON body the route validates, or one its handler parses itself. */
function requestBodyOf(def: RouteSpec): unknown {
  if (def.body) return { required: true, content: { 'application/json': { schema: strip(def.body) } } };
  if (!def.requestBody) return undefined;
  return {
    required: def.requestBody.required ?? true,
    ...(def.requestBody.description ? { description: def.requestBody.description } : {}),
    content: Object.fromEntries(
      Object.entries(def.requestBody.content).map(([ct, v]) => [ct, { schema: strip(v.schema) }]),
    ),
  };
}

/** One operation of the document, from one route definition. */
function operationOf(def: RouteSpec): unknown {
  const responses: Record<string, unknown> = {};
  for (const [status, res] of Object.entries(def.responses)) responses[status] = responseOf(res);
  problemResponses(def, responses);
  const requestBody = requestBodyOf(def);
  return {
    operationId: def.operationId,
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    tags: def.tags,
    ...(def.auth === 'management'
      ? {
          security: [{ managementKey: [] }, { consoleSession: [] }],
          'x-required-role': requiredRole(def),
          ...(def.accountWide ? { 'x-account-wide': true } : {}),
        }
      : { security: [] }),
    ...(def.params || def.query ? { parameters: parametersOf(def) } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

const SECURITY_SCHEMES = {
  managementKey: { type: 'http', scheme: 'bearer', description: 'A management key, `svc_mgmt_...`' },
  consoleSession: {
    type: 'apiKey',
    in: 'cookie',
    name: 'intake_session',
    description:
      'The web console’s session (`POST /v1/sessions`); state-changing requests must also send its `csrf_token` as `x-csrf-token`',
  },
  submissionKey: {
    type: 'http',
    scheme: 'bearer',
    description: 'A submission key, `svc_sub_...` (optional on ingest)',
  },
};

/**
 * Builds the OpenAPI 3.1 document from route definitions: the same schemas that ajv validates
 * requests with. It reads the definitions only (never a handler), so it composes nothing.
 */
export function buildOpenApi(options: {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  problemsUrl: string;
  routes: readonly RouteSpec[];
}): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const def of options.routes) {
    if (def.hidden) continue;
    const path = def.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][def.method.toLowerCase()] = operationOf(def);
  }
  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description: options.description },
    servers: [{ url: options.serverUrl }],
    paths,
    components: { securitySchemes: SECURITY_SCHEMES, schemas: { Problem: strip(ProblemSchema) } },
  };
}

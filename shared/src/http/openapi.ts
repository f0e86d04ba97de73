import { Type, type TSchema } from '@sinclair/typebox';
import { PROBLEMS, type ProblemSlug } from '../contracts/problems';
import type { RouteDef } from './route';

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

function parametersOf(def: RouteDef): unknown[] {
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
        required: where === 'path' || required.has(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  }
  return out;
}

/** Builds the OpenAPI 3.1 document from route definitions: the same schemas that ajv validates requests with. */
export function buildOpenApi(options: {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  problemsUrl: string;
  routes: RouteDef[];
}): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const def of options.routes) {
    if (def.hidden) continue;
    const path = def.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const responses: Record<string, unknown> = {};
    for (const [status, res] of Object.entries(def.responses)) {
      responses[status] = {
        description: res.description,
        ...(res.headers
          ? {
              headers: Object.fromEntries(
                Object.entries(res.headers).map(([h, v]) => [
                  h,
                  { description: v.description, schema: strip(v.schema) },
                ]),
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
    const problemSlugs = new Set<ProblemSlug>(def.problems ?? []);
    if (def.auth === 'management')
      ['unauthorized', 'invalid-key', 'insufficient-scope', 'csrf-failed'].forEach((s) =>
        problemSlugs.add(s as ProblemSlug),
      );
    if (def.body || def.params || def.query) problemSlugs.add('validation-failed');
    if (def.body) problemSlugs.add('bad-body');
    const byStatus = new Map<number, ProblemSlug[]>();
    for (const slug of problemSlugs)
      byStatus.set(PROBLEMS[slug].status, [...(byStatus.get(PROBLEMS[slug].status) ?? []), slug]);
    for (const [status, slugs] of byStatus) {
      if (responses[status]) continue;
      responses[status] = {
        description: `Problem: ${slugs.map((s) => `\`${s}\``).join(', ')}`,
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      };
    }
    responses['default'] = {
      description: 'Any other problem',
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
    const requestBody = def.body
      ? { required: true, content: { 'application/json': { schema: strip(def.body) } } }
      : def.requestBody
        ? {
            required: def.requestBody.required ?? true,
            ...(def.requestBody.description ? { description: def.requestBody.description } : {}),
            content: Object.fromEntries(
              Object.entries(def.requestBody.content).map(([ct, v]) => [ct, { schema: strip(v.schema) }]),
            ),
          }
        : undefined;
    paths[path] ??= {};
    paths[path][def.method.toLowerCase()] = {
      operationId: def.operationId,
      summary: def.summary,
      ...(def.description ? { description: def.description } : {}),
      tags: def.tags,
      ...(def.auth === 'management' ? { security: [{ managementKey: [] }, { consoleSession: [] }] } : { security: [] }),
      ...(def.params || def.query ? { parameters: parametersOf(def) } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description: options.description },
    servers: [{ url: options.serverUrl }],
    paths,
    components: {
      securitySchemes: {
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
      },
      schemas: { Problem: strip(ProblemSchema) },
    },
  };
}

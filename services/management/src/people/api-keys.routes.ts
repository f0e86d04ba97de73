import { Type } from '@sinclair/typebox';
import { problem, toTimestamp } from '@intake/shared/contracts';
import { routeGroup } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { mintApiKey, revokeApiKey } from './api-keys';
import { listApiKeys, type ApiKeyRow } from './api-key.repository';
import {
  IdParams,
  List,
  Nullable,
  NullableTimestamp,
  ProjectIds,
  ShownProjectIds,
  Timestamp,
} from '../platform/schemas';
import { projectLimit } from '../submissions/projects';
import { auditOf, changeBy } from '../platform/audit-trail';

const apiKeyRoute = routeGroup({ tags: ['API keys'], auth: 'management', role: 'admin' });

const KeyRole = Type.Union([Type.Literal('viewer'), Type.Literal('editor'), Type.Literal('admin')]);

const ApiKey = Type.Object(
  {
    id: Type.String({ description: '`key_...`' }),
    type: Type.Union([Type.Literal('submission'), Type.Literal('management')]),
    role: Type.Union([KeyRole, Type.Null()], {
      description: 'a management key’s role (`admin` for keys made before roles); null for a submission key',
    }),
    project_ids: ShownProjectIds,
    name: Nullable(Type.String()),
    prefix: Type.String({ description: 'the first characters of the key, to recognise it' }),
    created_at: Timestamp,
    last_used_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
    created_by: Type.Union(
      [
        Type.Object({
          type: Type.Union([
            Type.Literal('member'),
            Type.Literal('api_key'),
            Type.Literal('operator'),
            Type.Literal('system'),
          ]),
          id: Nullable(
            Type.String({ description: 'the member (`mem_...`) or key (`key_...`); null for the operator' }),
          ),
          label: Nullable(Type.String({ description: 'the member’s e-mail or the key’s name, when it was minted' })),
        }),
        Type.Null(),
      ],
      { description: 'who minted the key; null for keys made before this was recorded' },
    ),
  },
  { $id: 'ApiKey' },
);
const CreatedApiKey = Type.Composite([
  ApiKey,
  Type.Object({ key: Type.String({ description: 'the full key, shown this once' }) }),
]);

function present(row: ApiKeyRow) {
  return {
    id: row.id,
    type: row.type,
    role: row.type === 'management' ? (row.role ?? 'admin') : null,
    project_ids: row.project_ids,
    name: row.name,
    prefix: row.prefix,
    created_at: toTimestamp(row.created_at),
    last_used_at: row.last_used_at ? toTimestamp(row.last_used_at) : null,
    revoked_at: row.revoked_at ? toTimestamp(row.revoked_at) : null,
    created_by: row.created_by_type
      ? { type: row.created_by_type, id: row.created_by_id, label: row.created_by_label }
      : null,
  };
}

/** `POST /v1/api-keys`: mints a key, shown this once. */
export const createApiKeyRoute = apiKeyRoute({
  method: 'POST',
  path: '/v1/api-keys',
  operationId: 'createApiKey',
  summary: 'Create an API key (the full key is returned this once)',
  body: Type.Object(
    {
      type: Type.Union([Type.Literal('submission'), Type.Literal('management')]),
      name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
      role: Type.Optional(
        Type.Union([Type.Literal('viewer'), Type.Literal('editor'), Type.Literal('admin')], {
          description:
            'a management key’s role: `admin` (the default), `editor`, or `viewer` (read-only: dashboards and exports)',
        }),
      ),
      project_ids: Type.Optional(Nullable(ProjectIds)),
    },
    { additionalProperties: false },
  ),
  responses: { 201: { description: 'Created', schema: CreatedApiKey } },
  problems: ['rate-limited'],
  async handler(ctx, { body, principal }, platform: Platform) {
    const { db, clock, config } = platform;
    if (body.type === 'submission' && body.role !== undefined)
      throw problem('validation-failed', 'body/role is only for management keys', {
        errors: [{ field: 'body/role', message: 'is only for management keys' }],
      });
    if (body.type === 'submission' && body.project_ids)
      throw problem('validation-failed', 'body/project_ids is only for management keys', {
        errors: [{ field: 'body/project_ids', message: 'is only for management keys' }],
      });
    const role = body.type === 'management' ? (body.role ?? 'admin') : null;
    const created = await mintApiKey({
      role,
      projectIds: await projectLimit(db, principal.accountId, role, body.project_ids),
      db,
      audit: auditOf(ctx, principal, platform),
      accountId: principal.accountId,
      type: body.type,
      name: body.name,
      by: principal.actor,
      now: clock.now(),
      cap: { limit: config.KEY_MINT_LIMIT, windowSeconds: config.KEY_MINT_WINDOW_SECONDS },
    });
    ctx.status = 201;
    ctx.body = { ...present(created), key: created.key };
  },
});

/** `GET /v1/api-keys`: the account's keys, never in full. */
export const listApiKeysRoute = apiKeyRoute({
  method: 'GET',
  path: '/v1/api-keys',
  operationId: 'listApiKeys',
  summary: 'List the account’s API keys, newest first (revoked ones included)',
  responses: { 200: { description: 'The keys, never the full key', schema: List(ApiKey) } },
  async handler(ctx, { principal }, { db }: Platform) {
    ctx.body = { data: (await listApiKeys(db, principal.accountId)).map(present) };
  },
});

/** `DELETE /v1/api-keys/:id`: revokes a key at once. */
export const revokeApiKeyRoute = apiKeyRoute({
  method: 'DELETE',
  path: '/v1/api-keys/:id',
  operationId: 'revokeApiKey',
  summary: 'Revoke an API key (takes effect at once)',
  params: IdParams('apiKey', 'API key id'),
  responses: { 204: { description: 'Revoked' } },
  problems: ['not-found', 'conflict'],
  async handler(ctx, { params, principal }, platform: Platform) {
    await revokeApiKey({ ...changeBy(ctx, principal, platform), id: params.id, now: platform.clock.now() });
  },
});

/** The API key routes, in the order the OpenAPI document lists them. */
export const apiKeyRoutes = [createApiKeyRoute, listApiKeysRoute, revokeApiKeyRoute];

import { Type } from '@sinclair/typebox';
import { route, toTimestamp, type Platform } from '@intake/shared';
import { createWebhook, deleteWebhook, listWebhooks, testWebhook, updateWebhook } from '../domain/webhooks';
import type { WebhookRow } from '../repositories/webhook.repository';
import { IdParams, List, Timestamp } from './schemas';

const Webhook = Type.Object(
  {
    id: Type.String({ description: '`wh_...`' }),
    form_id: Type.String({ description: '`frm_...`' }),
    url: Type.String({ description: 'delivery target (https)' }),
    enabled: Type.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Webhook' },
);
const Secret = Type.String({
  pattern: '^whsec_',
  description: 'signing secret `whsec_<base64 of 32 bytes>`; shown only in this answer',
});
const WebhookWithSecret = Type.Composite([Webhook, Type.Object({ secret: Secret })]);
const WebhookMaybeSecret = Type.Composite([Webhook, Type.Object({ secret: Type.Optional(Secret) })]);
const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'https URL outside private networks (http and private targets only with WEBHOOK_ALLOW_PRIVATE_NETWORKS)',
});
const TestResult = Type.Object({
  status_code: Type.Integer({
    description: 'what the endpoint answered; 0 when it did not answer (network error, timeout, refused target)',
  }),
  ok: Type.Boolean({ description: 'true for a 2xx answer' }),
  error: Type.Optional(Type.String({ description: 'why the ping failed, when it did' })),
  duration_ms: Type.Integer(),
});

function present(row: WebhookRow) {
  return {
    id: row.id,
    form_id: row.form_id,
    url: row.url,
    enabled: row.enabled,
    created_at: toTimestamp(row.created_at),
    updated_at: toTimestamp(row.updated_at),
  };
}

/** What the webhook domain functions need of the platform, with the time of the request and the account. */
const webhookDeps = ({ db, secrets, config, clock }: Platform, accountId: string) => ({
  db,
  secrets,
  config,
  now: clock.now(),
  accountId,
});

/** `POST /v1/forms/:id/webhooks`: a new webhook, its signing secret shown this once. */
export const createWebhookRoute = route({
  method: 'POST',
  path: '/v1/forms/:id/webhooks',
  operationId: 'createWebhook',
  summary: 'Add a webhook to a form (the signing secret is returned this once)',
  tags: ['Webhooks'],
  auth: 'management',
  params: IdParams('form', 'form id'),
  body: Type.Object({ url: Url }, { additionalProperties: false }),
  responses: { 201: { description: 'Created', schema: WebhookWithSecret } },
  problems: ['not-found', 'validation-failed'],
  async handler(ctx, { params, body, principal }, platform: Platform) {
    const deps = webhookDeps(platform, principal.accountId);
    const created = await createWebhook({ ...deps, formId: params.id, url: body.url });
    ctx.status = 201;
    ctx.set('Location', `/v1/webhooks/${created.id}`);
    ctx.body = { ...present(created), secret: created.plainSecret };
  },
});

/** `GET /v1/forms/:id/webhooks`. */
export const listWebhooksRoute = route({
  method: 'GET',
  path: '/v1/forms/:id/webhooks',
  operationId: 'listWebhooks',
  summary: 'List a form’s webhooks (never their secrets)',
  tags: ['Webhooks'],
  auth: 'management',
  params: IdParams('form', 'form id'),
  responses: { 200: { description: 'The webhooks, oldest first', schema: List(Webhook) } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, { db }: Platform) {
    ctx.body = {
      data: (await listWebhooks({ db, accountId: principal.accountId, formId: params.id })).map(present),
    };
  },
});

/** `PATCH /v1/webhooks/:id`: url, enabled, or a new secret. */
export const updateWebhookRoute = route({
  method: 'PATCH',
  path: '/v1/webhooks/:id',
  operationId: 'updateWebhook',
  summary: 'Change a webhook’s url or enabled flag; `rotate_secret: true` returns a new secret this once',
  tags: ['Webhooks'],
  auth: 'management',
  params: IdParams('webhook', 'webhook id'),
  body: Type.Object(
    {
      url: Type.Optional(Url),
      enabled: Type.Optional(Type.Boolean()),
      rotate_secret: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  responses: {
    200: { description: 'The updated webhook, with `secret` only when rotated', schema: WebhookMaybeSecret },
  },
  problems: ['not-found', 'validation-failed'],
  async handler(ctx, { params, body, principal }, platform: Platform) {
    const updated = await updateWebhook({
      ...webhookDeps(platform, principal.accountId),
      id: params.id,
      changes: body,
    });
    ctx.body = { ...present(updated), ...(updated.plainSecret ? { secret: updated.plainSecret } : {}) };
  },
});

/** `DELETE /v1/webhooks/:id`. */
export const deleteWebhookRoute = route({
  method: 'DELETE',
  path: '/v1/webhooks/:id',
  operationId: 'deleteWebhook',
  summary: 'Remove a webhook (its pending deliveries are dropped with it)',
  tags: ['Webhooks'],
  auth: 'management',
  params: IdParams('webhook', 'webhook id'),
  responses: { 204: { description: 'Removed' } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, { db }: Platform) {
    await deleteWebhook({ db, accountId: principal.accountId, id: params.id });
    ctx.status = 204;
  },
});

/** `POST /v1/webhooks/:id/test`: a signed ping, sent now. */
export const testWebhookRoute = route({
  method: 'POST',
  path: '/v1/webhooks/:id/test',
  operationId: 'testWebhook',
  summary: 'Send a signed `webhook.test` envelope now and report what the endpoint answered',
  description:
    'Synchronous; creates no submission. The ping appears in the delivery log as a `webhook.test` delivery with one attempt.',
  tags: ['Webhooks'],
  auth: 'management',
  params: IdParams('webhook', 'webhook id'),
  responses: { 200: { description: 'What the endpoint answered', schema: TestResult } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, platform: Platform) {
    const result = await testWebhook({ ...webhookDeps(platform, principal.accountId), id: params.id });
    ctx.body = {
      status_code: result.statusCode ?? 0,
      ok: result.ok,
      ...(result.error ? { error: result.error } : {}),
      duration_ms: result.durationMs,
    };
  },
});

/** The webhook routes, in the order the OpenAPI document lists them. */
export const webhookRoutes = [
  createWebhookRoute,
  listWebhooksRoute,
  updateWebhookRoute,
  deleteWebhookRoute,
  testWebhookRoute,
];

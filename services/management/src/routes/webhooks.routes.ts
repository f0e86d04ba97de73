import { Type } from '@sinclair/typebox';
import { route, toTimestamp, type Platform, type RouteDef } from '@intake/shared';
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

export function webhookRoutes(platform: Platform): RouteDef[] {
  const { db, clock, config, secrets } = platform;
  const deps = () => ({ db, secrets, config, now: clock.now() });
  return [
    route({
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
      async handler(ctx, { params, body, principal }) {
        const created = await createWebhook({
          ...deps(),
          accountId: principal.accountId,
          formId: params.id,
          url: body.url,
        });
        ctx.status = 201;
        ctx.set('Location', `/v1/webhooks/${created.id}`);
        ctx.body = { ...present(created), secret: created.plainSecret };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/forms/:id/webhooks',
      operationId: 'listWebhooks',
      summary: 'List a form’s webhooks (never their secrets)',
      tags: ['Webhooks'],
      auth: 'management',
      params: IdParams('form', 'form id'),
      responses: { 200: { description: 'The webhooks, oldest first', schema: List(Webhook) } },
      problems: ['not-found'],
      async handler(ctx, { params, principal }) {
        ctx.body = {
          data: (await listWebhooks({ db, accountId: principal.accountId, formId: params.id })).map(present),
        };
      },
    }),
    route({
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
      async handler(ctx, { params, body, principal }) {
        const updated = await updateWebhook({
          ...deps(),
          accountId: principal.accountId,
          id: params.id,
          changes: body,
        });
        ctx.body = { ...present(updated), ...(updated.plainSecret ? { secret: updated.plainSecret } : {}) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/webhooks/:id',
      operationId: 'deleteWebhook',
      summary: 'Remove a webhook (its pending deliveries are dropped with it)',
      tags: ['Webhooks'],
      auth: 'management',
      params: IdParams('webhook', 'webhook id'),
      responses: { 204: { description: 'Removed' } },
      problems: ['not-found'],
      async handler(ctx, { params, principal }) {
        await deleteWebhook({ db, accountId: principal.accountId, id: params.id });
        ctx.status = 204;
      },
    }),
    route({
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
      async handler(ctx, { params, principal }) {
        const result = await testWebhook({ ...deps(), accountId: principal.accountId, id: params.id });
        ctx.body = {
          status_code: result.statusCode ?? 0,
          ok: result.ok,
          ...(result.error ? { error: result.error } : {}),
          duration_ms: result.durationMs,
        };
      },
    }),
  ];
}

import { Type } from '@sinclair/typebox';
import { toTimestamp } from '@intake/shared/contracts';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { deliveryLog, replayDelivery, type DeliveryWithAttempts } from './deliveries';
import { IdParams, List, Nullable, NullableTimestamp, Timestamp } from '../platform/schemas';
import { changeBy } from '../platform/audit-trail';

const Attempt = Type.Object({
  attempt: Type.Integer({ minimum: 1, maximum: 5, description: 'the `x-service-attempt` sent' }),
  trigger: Type.Union([Type.Literal('schedule'), Type.Literal('replay'), Type.Literal('test')]),
  started_at: Timestamp,
  duration_ms: Type.Integer(),
  status_code: Nullable(Type.Integer({ description: 'null when the endpoint did not answer' })),
  error: Nullable(Type.String()),
  response_body: Nullable(
    Type.String({
      description:
        'the first 1 KiB of the answer; null when it may have come from a private address (a receiver inside the ' +
        'network, allowed by WEBHOOK_ALLOW_PRIVATE_NETWORKS)',
    }),
  ),
});
export const Delivery = Type.Object(
  {
    id: Type.String({ description: '`whd_...`, the envelope id' }),
    webhook_id: Type.String({ description: '`wh_...`, the webhook it goes to' }),
    webhook_url: Type.String({ description: 'that webhook’s URL as it is now' }),
    type: Type.String({ description: 'envelope type: `submission.created` or `webhook.test`' }),
    submission_id: Nullable(Type.String()),
    status: Type.Union([
      Type.Literal('pending'),
      Type.Literal('retrying'),
      Type.Literal('succeeded'),
      Type.Literal('failed'),
    ]),
    attempt_count: Type.Integer({ description: 'attempts made, replays and tests included' }),
    last_status_code: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    errors: Type.Array(Type.String(), { description: 'the error of every failed attempt, oldest first' }),
    next_attempt_at: NullableTimestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
    attempts: Type.Array(Attempt),
  },
  { $id: 'Delivery' },
);

export function presentDelivery(d: DeliveryWithAttempts) {
  return {
    id: d.id,
    webhook_id: d.webhook_id,
    webhook_url: d.webhook_url,
    type: d.event_type,
    submission_id: d.submission_id,
    status: d.status,
    attempt_count: d.attempt_count,
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    errors: d.attempts.flatMap((a) => (a.error ? [a.error] : [])),
    next_attempt_at: d.next_attempt_at ? toTimestamp(d.next_attempt_at) : null,
    created_at: toTimestamp(d.created_at),
    updated_at: toTimestamp(d.updated_at),
    attempts: d.attempts.map((a) => ({
      attempt: a.attempt,
      trigger: a.trigger,
      started_at: toTimestamp(a.started_at),
      duration_ms: a.duration_ms,
      status_code: a.status_code,
      error: a.error,
      response_body: a.response_body,
    })),
  };
}

/** `GET /v1/webhooks/:id/deliveries`: a webhook's delivery log. */
export const listWebhookDeliveriesRoute = route({
  method: 'GET',
  path: '/v1/webhooks/:id/deliveries',
  operationId: 'listWebhookDeliveries',
  summary: 'The webhook’s last 50 deliveries, newest first, with every attempt',
  tags: ['Webhooks'],
  auth: 'management',
  params: IdParams('webhook', 'webhook id'),
  query: Type.Object({
    status: Type.Optional(
      Type.Union([Type.Literal('all'), Type.Literal('failed'), Type.Literal('pending'), Type.Literal('succeeded')], {
        description: 'only deliveries in this state (`pending` includes `retrying`); default `all`',
      }),
    ),
  }),
  responses: { 200: { description: 'The delivery log', schema: List(Delivery) } },
  problems: ['not-found'],
  async handler(ctx, { params, query, principal }, { db }: Platform) {
    const log = await deliveryLog({
      db,
      accountId: principal.accountId,
      webhookId: params.id,
      status: query.status,
    });
    ctx.body = {
      data: log.map(presentDelivery),
    };
  },
});

/** `POST /v1/deliveries/:id/replay`: one extra attempt of a delivery, now. */
export const replayDeliveryRoute = route({
  method: 'POST',
  path: '/v1/deliveries/:id/replay',
  operationId: 'replayDelivery',
  summary: 'Send one delivery again now, whatever its schedule or state',
  description:
    'Queues one immediate extra attempt (trigger `replay`), outside the retry ladder. Its ' +
    '`x-service-attempt` is the number of attempts made so far + 1, capped at 5. A delivery of a disabled webhook is not replayed (409).',
  tags: ['Webhooks'],
  auth: 'management',
  params: IdParams('delivery', 'delivery id'),
  responses: {
    202: {
      description: 'Queued',
      schema: Type.Object({
        id: Type.String(),
        status: Type.String({ description: 'the delivery’s status before the replay' }),
        replay: Type.Literal('queued'),
      }),
    },
  },
  problems: ['not-found', 'conflict', 'service-unavailable'],
  async handler(ctx, { params, principal }, platform: Platform) {
    const delivery = await replayDelivery({ ...changeBy(ctx, principal, platform), id: params.id });
    ctx.status = 202;
    ctx.body = { id: delivery.id, status: delivery.status, replay: 'queued' };
  },
});

/** The delivery log routes, in the order the OpenAPI document lists them. */
export const deliveryRoutes = [listWebhookDeliveriesRoute, replayDeliveryRoute];

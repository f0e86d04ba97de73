import { Type } from '@sinclair/typebox';
import { formProject, newId, problem } from '@intake/shared/contracts';
import { isIntegration, signedRequest } from '@intake/shared/webhooks';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { replayFailedDeliveries, REPLAY_FAILED_LIMIT, submissionDeliveries } from './deliveries';
import { bulkChange } from '../submissions/inbox';
import { BulkActionSchema } from '../submissions/inbox.routes';
import { findFormNames, findWebhook } from './webhook.repository';
import { shownUrl } from './chat-urls';
import { Delivery, presentDelivery } from './deliveries.routes';
import { IdParams, List } from '../platform/schemas';
import { changeBy } from '../platform/audit-trail';

/** Quotes a string for a POSIX shell. */
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

const SignedSample = Type.Object({
  method: Type.Literal('POST'),
  url: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  body: Type.String({ description: 'the raw body the signatures cover' }),
  curl: Type.String({ description: 'a shell command that sends exactly this request' }),
});

/** `GET /v1/submissions/:id/deliveries`: a submission's deliveries, for the console. */
export const listSubmissionDeliveriesRoute = route({
  method: 'GET',
  path: '/v1/submissions/:id/deliveries',
  operationId: 'listSubmissionDeliveries',
  summary: 'The webhook deliveries of one submission (one per webhook), newest first, with every attempt',
  tags: ['Submissions'],
  auth: 'management',
  params: IdParams('submission', 'submission id, `sub_...`'),
  responses: { 200: { description: 'The deliveries', schema: List(Delivery) } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, { db }: Platform) {
    const list = await submissionDeliveries({ db, accountId: principal.accountId, submissionId: params.id });
    ctx.body = { data: list.map(presentDelivery) };
  },
});

/** `POST /v1/webhooks/:id/replay-failed`: every failed delivery of a webhook, sent again. */
export const replayFailedDeliveriesRoute = route({
  method: 'POST',
  path: '/v1/webhooks/:id/replay-failed',
  operationId: 'replayFailedDeliveries',
  summary: `Send every failed delivery of a webhook again now (at most ${REPLAY_FAILED_LIMIT}, oldest first)`,
  tags: ['Webhooks'],
  auth: 'management',
  params: IdParams('webhook', 'webhook id'),
  responses: {
    202: {
      description: 'Queued',
      schema: Type.Object({ replayed: Type.Array(Type.String(), { description: 'the delivery ids queued' }) }),
    },
  },
  problems: ['not-found', 'conflict', 'service-unavailable'],
  async handler(ctx, { params, principal }, platform: Platform) {
    const replayed = await replayFailedDeliveries({ ...changeBy(ctx, principal, platform), webhookId: params.id });
    ctx.status = 202;
    ctx.body = { replayed };
  },
});

/** `GET /v1/webhooks/:id/sample`: a signed sample request to copy as curl. */
export const getWebhookSampleRoute = route({
  method: 'GET',
  path: '/v1/webhooks/:id/sample',
  operationId: 'getWebhookSample',
  summary: 'A signed sample `webhook.test` request for this webhook, with a curl command that sends it',
  description:
    'Signed with the webhook’s secret exactly as a real attempt is (both signatures); the secret itself is not ' +
    'returned. Nothing is sent or stored. An integration sends no signed request: 409.',
  tags: ['Webhooks'],
  auth: 'management',
  params: IdParams('webhook', 'webhook id'),
  responses: { 200: { description: 'The request', schema: SignedSample } },
  problems: ['not-found', 'conflict'],
  async handler(ctx, { params, principal }, { db, secrets, clock, config }: Platform) {
    const webhook = await findWebhook(db, principal.accountId, params.id);
    if (!webhook) throw problem('not-found', `No webhook ${params.id}`);
    if (isIntegration(webhook.format))
      throw problem('conflict', `${params.id} is an integration (${webhook.format}): it writes through the tool's API`);
    const now = clock.now();
    const form = await findFormNames(db, principal.accountId, webhook.form_id);
    const { body, headers } = signedRequest({
      type: 'webhook.test',
      deliveryId: newId('delivery', now.getTime()),
      data: { form_id: webhook.form_id, project: form ? formProject(form) : null, sample: true },
      attempt: 1,
      secret: secrets.open(webhook.secret),
      now,
      // A chat webhook's sample is the message its service gets.
      chat: {
        format: webhook.format,
        formName: form?.name ?? '',
        baseUrl: config.PUBLIC_BASE_URL,
      },
    });
    const curl = [
      `curl -X POST ${shellQuote(shownUrl(webhook))}`,
      ...Object.entries(headers).map(([k, v]) => `-H ${shellQuote(`${k}: ${v}`)}`),
      `--data-raw ${shellQuote(body)}`,
    ].join(' \\\n  ');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { method: 'POST', url: shownUrl(webhook), headers, body, curl };
  },
});

/** `POST /v1/submissions/bulk`: delete, or mark spam or received, several submissions. */
export const bulkSubmissionsRoute = route({
  method: 'POST',
  path: '/v1/submissions/bulk',
  operationId: 'bulkSubmissions',
  summary: 'Move several submissions to the trash, or mark them spam, received, read or unread, in one request',
  description:
    'Each id is handled as by `DELETE` or `PATCH /v1/submissions/:id`; ids that do not exist (or belong to another ' +
    'account) are listed in `not_found` and do not stop the others.',
  tags: ['Submissions'],
  auth: 'management',
  body: Type.Object(
    {
      action: BulkActionSchema,
      ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: 100,
        uniqueItems: true,
      }),
    },
    { additionalProperties: false },
  ),
  responses: {
    200: {
      description: 'What was done',
      schema: Type.Object({ done: Type.Array(Type.String()), not_found: Type.Array(Type.String()) }),
    },
  },
  async handler(ctx, { body, principal }, platform: Platform) {
    const done = await bulkChange({ ...changeBy(ctx, principal, platform), action: body.action, ids: body.ids });
    ctx.body = { done, not_found: body.ids.filter((id) => !done.includes(id)) };
  },
});

/**
 * What the web console needs beyond the basic resources: a submission's deliveries, replaying
 * every failed delivery of a webhook, a signed sample request to copy as curl, and bulk actions.
 */
export const consoleSupportRoutes = [
  listSubmissionDeliveriesRoute,
  replayFailedDeliveriesRoute,
  getWebhookSampleRoute,
  bulkSubmissionsRoute,
];

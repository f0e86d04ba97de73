import { Type } from '@sinclair/typebox';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { bulkByFilter, submissionNeighbours } from './inbox';
import { IdParams, Nullable } from '../platform/schemas';
import { Filters, Order, when } from './submission-filters';
import { changeBy } from '../platform/audit-trail';

/** `GET /v1/submissions/:id/neighbours`: the submissions before and after one in its form's list. */
export const submissionNeighboursRoute = route({
  method: 'GET',
  path: '/v1/submissions/:id/neighbours',
  operationId: 'getSubmissionNeighbours',
  summary: 'The submissions listed just before and just after this one, with the same filters and order',
  description:
    'For stepping through a filtered list one submission at a time. Both are null when the submission itself does ' +
    'not match the filters.',
  tags: ['Submissions'],
  auth: 'management',
  params: IdParams('submission', 'submission id'),
  query: Type.Object({ order: Type.Optional(Order), ...Filters }),
  responses: {
    200: {
      description: 'Their ids',
      schema: Type.Object({
        previous: Nullable(Type.String({ description: 'listed just before (newer, in the default order)' })),
        next: Nullable(Type.String({ description: 'listed just after (older, in the default order)' })),
      }),
    },
  },
  problems: ['not-found'],
  async handler(ctx, { params, query, principal }, { db }: Platform) {
    const { order, status, q } = query;
    ctx.body = await submissionNeighbours({
      db,
      accountId: principal.accountId,
      id: params.id,
      order,
      status,
      q,
      since: when(query.since, 'since'),
      until: when(query.until, 'until'),
    });
  },
});

const FilterBody = Type.Object({ ...Filters }, { additionalProperties: false });

/** What a bulk change does to each submission (`BulkAction`), for both bulk routes: by filter and by ids. */
export const BulkActionSchema = Type.Union([
  Type.Literal('delete'),
  Type.Literal('spam'),
  Type.Literal('received'),
  Type.Literal('read'),
  Type.Literal('unread'),
]);

/** `POST /v1/forms/:id/submissions/bulk`: one action on every submission a filter matches. */
export const bulkByFilterRoute = route({
  method: 'POST',
  path: '/v1/forms/:id/submissions/bulk',
  operationId: 'bulkSubmissionsByFilter',
  summary: 'Delete, mark spam or received, or mark read or unread every submission of a form a filter matches',
  description:
    'The filter is the list’s (`status`, `since`, `until`, `q`; empty: all of the form’s submissions). Each ' +
    'submission is handled as by `DELETE` or `PATCH /v1/submissions/:id`; those that arrive while it runs are left alone.',
  tags: ['Submissions'],
  auth: 'management',
  params: IdParams('form', 'form id'),
  body: Type.Object(
    {
      action: BulkActionSchema,
      filter: FilterBody,
    },
    { additionalProperties: false },
  ),
  responses: {
    200: {
      description: 'How many were handled',
      schema: Type.Object({ done: Type.Integer({ minimum: 0 }) }),
    },
  },
  problems: ['not-found'],
  async handler(ctx, { params, body, principal }, platform: Platform) {
    const { status, q, since, until } = body.filter;
    ctx.body = await bulkByFilter({
      ...changeBy(ctx, principal, platform),
      formId: params.id,
      action: body.action,
      status,
      q,
      since: when(since, 'since'),
      until: when(until, 'until'),
    });
  },
});

/** `GET /v1/settings/webhooks`: how this deployment sends webhooks. */
export const webhookSettingsRoute = route({
  method: 'GET',
  path: '/v1/settings/webhooks',
  operationId: 'getWebhookSettings',
  summary: 'How this deployment delivers webhooks: the delays before each retry and the time a receiver has',
  tags: ['Webhooks'],
  auth: 'management',
  responses: {
    200: {
      description: 'The settings',
      schema: Type.Object({
        retry_schedule_ms: Type.Array(Type.Integer({ minimum: 0 }), {
          description: 'the delay before each retry after a failed attempt, in order (WEBHOOK_RETRY_SCHEDULE)',
        }),
        timeout_ms: Type.Integer({ description: 'the time a receiver has to answer (WEBHOOK_TIMEOUT_MS)' }),
      }),
    },
  },
  async handler(ctx, _input, { config }: Platform) {
    ctx.body = { retry_schedule_ms: [...config.WEBHOOK_RETRY_SCHEDULE], timeout_ms: config.WEBHOOK_TIMEOUT_MS };
  },
});

/** What the console's inbox and webhook pages need beyond the basic resources. */
export const inboxRoutes = [submissionNeighboursRoute, bulkByFilterRoute, webhookSettingsRoute];

import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import { toTimestamp } from '@intake/shared/contracts';
import { type Principal } from '@intake/shared/auth';
import { WEBHOOK_FORMATS } from '@intake/shared/webhooks';
import { routeGroup } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  replayWebhook,
  testWebhook,
  updateWebhook,
  type WebhookWithHealth,
} from './webhooks';
import { shownUrl } from './chat-urls';
import { IdParams, List, Nullable, NullableTimestamp, Timestamp } from '../platform/schemas';
import { when } from '../submissions/submission-filters';
import { auditOf, changeBy } from '../platform/audit-trail';

const webhookRoute = routeGroup({ tags: ['Webhooks'], auth: 'management' });

const Format = Type.Union(
  WEBHOOK_FORMATS.map((f) => Type.Literal(f)),
  {
    description:
      '`standard`: the signed JSON envelope; `slack`, `discord`, `teams`: a readable message in that service’s ' +
      'incoming-webhook shape (form name, fields, a link to the submission in the console); `google_sheets`, ' +
      '`airtable`, `notion`: an integration, which writes each submission as a row, record or page through that ' +
      'tool’s API (see `destination`). A chat message is posted unsigned, without the envelope’s `x-service-*` and ' +
      '`webhook-*` headers (its URL is its credential), so a chat webhook has no secret to show or rotate',
  },
);
const Text = (maxLength: number, description: string) => Type.String({ minLength: 1, maxLength, description });
const DestinationInput = Type.Object(
  {
    spreadsheet_id: Type.Optional(Text(300, 'google_sheets: the spreadsheet’s id, or its address')),
    sheet: Type.Optional(Text(100, 'google_sheets: the sheet (tab) rows go to; default `Sheet1`')),
    service_account_key: Type.Optional(
      Text(20_000, 'google_sheets: the service account’s JSON key file, whole; sealed, never shown again'),
    ),
    base_id: Type.Optional(Text(100, 'airtable: the base’s id (`app…`)')),
    table: Type.Optional(Text(255, 'airtable: the table’s id (`tbl…`) or name')),
    database_id: Type.Optional(Text(300, 'notion: the database’s id, or its address')),
    token: Type.Optional(
      Text(500, 'airtable: a personal access token; notion: an integration secret. Sealed, never shown again'),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Where an integration writes, and its credential (required with an integration’s `format`, refused with ' +
      'another). On a change, the fields given replace the current ones; a credential left out is kept.',
  },
);
const Destination = Type.Optional(
  Type.Object(
    {
      spreadsheet_id: Type.Optional(Type.String()),
      sheet: Type.Optional(Type.String()),
      client_email: Type.Optional(
        Type.String({ description: 'google_sheets: the service account, which the spreadsheet is shared with' }),
      ),
      base_id: Type.Optional(Type.String()),
      table: Type.Optional(Type.String()),
      database_id: Type.Optional(Type.String()),
    },
    { description: 'an integration’s destination (never its credential); absent for a webhook' },
  ),
);
const Health = Type.Object({
  last_24h: Type.Object(
    { succeeded: Type.Integer(), failed: Type.Integer(), pending: Type.Integer({ description: 'retrying included' }) },
    { description: 'deliveries created in the last 24 hours, by how they stand now' },
  ),
  last_success_at: NullableTimestamp,
  last_failure_at: NullableTimestamp,
  failing_since: Nullable(Timestamp),
  consecutive_failures: Type.Integer({ description: 'failed attempts in a row since the last success' }),
});
const Webhook = Type.Object(
  {
    id: Type.String({ description: '`wh_...`' }),
    form_id: Type.String({ description: '`frm_...`' }),
    url: Type.String({
      description:
        'delivery target (https); an integration’s: its destination’s page. A chat webhook’s (`slack`, `discord`, ' +
        '`teams`) is its credential: sealed at rest, and shown only as scheme, host, `/…` and the last four ' +
        'characters (`https://hooks.slack.com/…Xy7Q`)',
    }),
    enabled: Type.Boolean(),
    format: Format,
    destination: Destination,
    disabled_reason: Nullable(
      Type.Literal('failing', { description: 'disabled by Intake after failing for WEBHOOK_DISABLE_AFTER' }),
    ),
    health: Health,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Webhook' },
);
const Secret = Type.String({
  pattern: '^whsec_',
  description: 'signing secret `whsec_<base64 of 32 bytes>`; shown only in this answer',
});
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

const maybeTime = (at: Date | null) => (at ? toTimestamp(at) : null);

function present(row: WebhookWithHealth) {
  return {
    id: row.id,
    form_id: row.form_id,
    url: shownUrl(row),
    enabled: row.enabled,
    format: row.format,
    ...(row.destination ? { destination: row.destination } : {}),
    disabled_reason: row.disabled_reason,
    health: {
      last_24h: row.recent,
      last_success_at: maybeTime(row.last_success_at),
      last_failure_at: maybeTime(row.last_failure_at),
      failing_since: maybeTime(row.failing_since),
      consecutive_failures: row.consecutive_failures,
    },
    created_at: toTimestamp(row.created_at),
    updated_at: toTimestamp(row.updated_at),
  };
}

/**
 * What the webhook domain functions need of the platform, with the time of the request, the account, and the audit
 * log's writer for the request's principal.
 */
const webhookDeps = (ctx: Context, principal: Principal, platform: Platform) => ({
  db: platform.db,
  secrets: platform.secrets,
  config: platform.config,
  now: platform.clock.now(),
  accountId: principal.accountId,
  audit: auditOf(ctx, principal, platform),
});

/** `POST /v1/forms/:id/webhooks`: a new webhook, its signing secret shown this once. */
export const createWebhookRoute = webhookRoute({
  method: 'POST',
  path: '/v1/forms/:id/webhooks',
  operationId: 'createWebhook',
  summary: 'Add a webhook to a form (the signing secret is returned this once)',
  params: IdParams('form', 'form id'),
  description:
    'A webhook takes `url`; an integration (`format` `google_sheets`, `airtable` or `notion`) takes `destination` ' +
    'instead, whose credential is sealed and never returned. Both get the same deliveries, retries, log, health ' +
    'and replay; an integration’s test ping checks that its credential reaches the destination and writes nothing. ' +
    'A webhook is posted the envelope `{ type, id, created_at, data }`; `data` of `submission.created` is ' +
    '`{ submission_id, form_id, project, payload, files }`: the spec’s fields, `project` (`{ id, name }` of the ' +
    'form’s project, null when the form is in the account’s default project) and `files` (`{ id, field, filename, ' +
    'content_type, size, url }`, links signed for 7 days); receivers should ignore fields they do not know.',
  body: Type.Object(
    {
      url: Type.Optional(Type.String({ ...Url, description: `${Url.description}; required unless an integration` })),
      format: Type.Optional(Format),
      destination: Type.Optional(DestinationInput),
    },
    // `url`, or an integration's `format` and `destination`.
    { additionalProperties: false, minProperties: 1 },
  ),
  responses: {
    201: {
      description: 'Created; with `secret` unless a chat format (`slack`, `discord`, `teams`)',
      schema: WebhookMaybeSecret,
    },
  },
  problems: ['not-found', 'conflict', 'validation-failed'],
  async handler(ctx, { params, body, principal }, platform: Platform) {
    const deps = webhookDeps(ctx, principal, platform);
    const created = await createWebhook({ ...deps, formId: params.id, ...body });
    ctx.status = 201;
    ctx.set('Location', `/v1/webhooks/${created.id}`);
    ctx.body = { ...present(created), ...(created.plainSecret ? { secret: created.plainSecret } : {}) };
  },
});

/** `GET /v1/forms/:id/webhooks`. */
export const listWebhooksRoute = webhookRoute({
  method: 'GET',
  path: '/v1/forms/:id/webhooks',
  operationId: 'listWebhooks',
  summary: 'List a form’s webhooks (never their secrets)',
  params: IdParams('form', 'form id'),
  responses: { 200: { description: 'The webhooks, oldest first', schema: List(Webhook) } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, { db, clock }: Platform) {
    ctx.body = {
      data: (await listWebhooks({ db, accountId: principal.accountId, formId: params.id, now: clock.now() })).map(
        present,
      ),
    };
  },
});

/** `GET /v1/webhooks/:id`: one webhook with its health. */
export const getWebhookRoute = webhookRoute({
  method: 'GET',
  path: '/v1/webhooks/:id',
  operationId: 'getWebhook',
  summary: 'Get a webhook with its health (never its secret)',
  params: IdParams('webhook', 'webhook id'),
  responses: { 200: { description: 'The webhook', schema: Webhook } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, { db, clock }: Platform) {
    ctx.body = present(await getWebhook({ db, accountId: principal.accountId, id: params.id, now: clock.now() }));
  },
});

/** `PATCH /v1/webhooks/:id`: url, enabled, or a new secret. */
export const updateWebhookRoute = webhookRoute({
  method: 'PATCH',
  path: '/v1/webhooks/:id',
  operationId: 'updateWebhook',
  summary:
    'Change a webhook’s url, enabled flag, format or an integration’s destination; `rotate_secret: true` returns a ' +
    'new secret this once',
  params: IdParams('webhook', 'webhook id'),
  body: Type.Object(
    {
      url: Type.Optional(Url),
      enabled: Type.Optional(
        Type.Boolean({ description: '`true` also clears `disabled_reason` and the failing streak' }),
      ),
      format: Type.Optional(Format),
      destination: Type.Optional(DestinationInput),
      rotate_secret: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  responses: {
    200: {
      description:
        'The updated webhook, with `secret` only when rotated (or made a signed `standard` webhook from a chat one)',
      schema: WebhookMaybeSecret,
    },
  },
  problems: ['not-found', 'conflict', 'validation-failed'],
  async handler(ctx, { params, body, principal }, platform: Platform) {
    const updated = await updateWebhook({
      ...webhookDeps(ctx, principal, platform),
      id: params.id,
      changes: body,
    });
    ctx.body = { ...present(updated), ...(updated.plainSecret ? { secret: updated.plainSecret } : {}) };
  },
});

/** `DELETE /v1/webhooks/:id`. */
export const deleteWebhookRoute = webhookRoute({
  method: 'DELETE',
  path: '/v1/webhooks/:id',
  operationId: 'deleteWebhook',
  summary: 'Remove a webhook (its pending deliveries are dropped with it)',
  params: IdParams('webhook', 'webhook id'),
  responses: { 204: { description: 'Removed' } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, platform: Platform) {
    await deleteWebhook({ ...changeBy(ctx, principal, platform), id: params.id });
  },
});

/** `POST /v1/webhooks/:id/test`: a signed ping, sent now. */
export const testWebhookRoute = webhookRoute({
  method: 'POST',
  path: '/v1/webhooks/:id/test',
  operationId: 'testWebhook',
  summary: 'Send a signed `webhook.test` envelope now and report what the endpoint answered',
  description:
    'Synchronous; creates no submission; `data` is `{ form_id, project, sample: true }`. A delivery process makes ' +
    'it as it makes every attempt (the same signed ' +
    'request, address checks and per-webhook send slots: an endpoint whose slots are all held by unanswered attempts ' +
    'is not sent another, and the answer says so). The ping appears in the delivery log as a `webhook.test` delivery ' +
    'with one attempt. 503 when no delivery process answers.',
  params: IdParams('webhook', 'webhook id'),
  responses: { 200: { description: 'What the endpoint answered', schema: TestResult } },
  problems: ['not-found', 'service-unavailable'],
  async handler(ctx, { params, principal }, platform: Platform) {
    const deps = { ...webhookDeps(ctx, principal, platform), nats: platform.nats };
    const result = await testWebhook({ ...deps, id: params.id });
    ctx.body = {
      status_code: result.status_code ?? 0,
      ok: result.ok,
      ...(result.error ? { error: result.error } : {}),
      duration_ms: result.duration_ms,
    };
  },
});

const Replayed = Type.Object({ replayed: Type.Integer({ minimum: 0 }) });

/** `POST /v1/webhooks/:id/replay`: the matching deliveries sent again, each once, at a bounded rate. */
export const replayWebhookRoute = webhookRoute({
  method: 'POST',
  path: '/v1/webhooks/:id/replay',
  operationId: 'replayWebhook',
  summary: 'Send a webhook’s matching deliveries again (e.g. every failed one since an outage began)',
  description:
    'Each matching delivery is queued once (one already waiting for its replay is not counted again) and sent as ' +
    'a replay at a bounded rate, beside new deliveries. `dry_run: true` only counts. Test pings are not replayed.',
  params: IdParams('webhook', 'webhook id'),
  body: Type.Object(
    {
      status: Type.Optional(Type.Literal('failed', { description: 'only failed deliveries; absent: every state' })),
      since: Type.Optional(Type.String({ format: 'date-time', description: 'created at or after (inclusive)' })),
      until: Type.Optional(Type.String({ format: 'date-time', description: 'created before (exclusive)' })),
      dry_run: Type.Optional(Type.Boolean({ description: 'count, queue nothing' })),
    },
    { additionalProperties: false },
  ),
  responses: {
    200: { description: 'With `dry_run`: how many deliveries would be queued', schema: Replayed },
    202: { description: 'How many deliveries were queued', schema: Replayed },
  },
  problems: ['not-found', 'conflict', 'validation-failed'],
  async handler(ctx, { params, body, principal }, platform: Platform) {
    const filter = {
      status: body.status,
      since: when(body.since, 'since', 'body'),
      until: when(body.until, 'until', 'body'),
    };
    const replayed = await replayWebhook({
      ...changeBy(ctx, principal, platform),
      id: params.id,
      filter,
      dryRun: body.dry_run === true,
      now: platform.clock.now(),
    });
    ctx.status = body.dry_run === true ? 200 : 202;
    ctx.body = { replayed };
  },
});

/** The webhook routes, in the order the OpenAPI document lists them. */
export const webhookRoutes = [
  createWebhookRoute,
  listWebhooksRoute,
  getWebhookRoute,
  updateWebhookRoute,
  deleteWebhookRoute,
  testWebhookRoute,
  replayWebhookRoute,
];

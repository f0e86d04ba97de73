import { Type } from '@sinclair/typebox';
import { toTimestamp } from '@intake/shared/contracts';
import { fileDownloadUrl, FILE_LINK_TTL_SECONDS, route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import {
  deleteSubmission,
  getSubmission,
  listSubmissions,
  restoreSubmissions,
  setSubmissionRead,
  setSubmissionStatus,
} from './submissions';
import { spamReasonsOf, spamScoreOf } from './spam-marks';
import type { FileRow, SubmissionRow } from './submission.repository';
import { IdParams, Nullable, Page, Timestamp } from '../platform/schemas';
import { deleteRoute } from '../platform/delete-route';
import { AutoresponseStatus, autoresponseOf } from './autoresponse-status';
import { deleteSubmissionForGood } from './submission-trash';
import { changeBy } from '../platform/audit-trail';
import { exportCsvRoute, exportNdjsonRoute, exportXlsxRoute } from './submission-export.routes';
import { Filters, Order, Status, when } from './submission-filters';

export const Submission = Type.Object(
  {
    id: Type.String({ description: '`sub_...`' }),
    form_id: Type.String(),
    status: Status,
    received_at: Timestamp,
    payload: Type.Record(Type.String(), Type.String(), {
      description: 'stored field names and values; control fields stripped',
    }),
    files: Type.Integer({ description: 'number of stored files' }),
    spam_reason: Nullable(Type.String({ description: 'why it is spam (`honeypot`, `marked-by-owner`, ...)' })),
    spam_score: Nullable(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'the spam classifier’s probability that it is spam; null when the classifier did not score it',
      }),
    ),
    spam_reasons: Type.Array(Type.String(), {
      description:
        'every reason the spam layers found, in shadow mode too (`honeypot`, `blocked-domain:mailinator.com`, ' +
        '`duplicate`, `classifier:0.97`, ...); empty: none',
    }),
    read: Type.Boolean({ description: 'whether the owner has opened it or marked it read' }),
    purged_at: Nullable(
      Type.String({
        format: 'date-time',
        description:
          'when the form’s `delete_after_delivery` removed its fields and files once every webhook had it: a ' +
          'tombstone (`payload` is empty, `files` is 0); null while it is whole',
      }),
    ),
  },
  { additionalProperties: false },
);

const Attachment = Type.Object({
  id: Type.String({ description: '`fil_...`' }),
  field: Type.String(),
  filename: Type.String(),
  content_type: Type.String(),
  size: Type.Integer(),
  url: Type.String({ format: 'uri', description: 'signed download link; works without a key until `expires_at`' }),
  expires_at: Timestamp,
});

const SubmissionDetail = Type.Object(
  {
    ...Submission.properties,
    attachments: Type.Array(Attachment, { description: 'the stored files with download links' }),
    autoresponse: AutoresponseStatus,
  },
  { additionalProperties: false },
);

const SubmissionPage = Type.Object({
  ...Page(Submission).properties,
  prev_cursor: Nullable(
    Type.String({
      description:
        'pass as `cursor` for the previous page; null on the first page, empty when the previous page is the first',
    }),
  ),
  total: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        'how many match the filters (with `total=true`): exact up to 10,000, beyond that Postgres’s estimate ' +
        '(`total_is_estimate`)',
    }),
  ),
  total_is_estimate: Type.Optional(
    Type.Boolean({
      description:
        'with `total`: `true` when over 10,000 match and `total` is the query planner’s estimate (show it as ' +
        '“about N”): an exact count reads every matching row',
    }),
  ),
});

export function presentSubmission(row: SubmissionRow) {
  return {
    id: row.id,
    form_id: row.form_id,
    status: row.status,
    received_at: toTimestamp(row.received_at),
    payload: row.payload,
    files: row.file_count,
    spam_reason: row.spam_reason,
    spam_score: spamScoreOf(row),
    spam_reasons: spamReasonsOf(row),
    read: row.read_at !== null,
    purged_at: row.purged_at ? toTimestamp(row.purged_at) : null,
  };
}

const TAGS = ['Submissions'];

/** A stored file as the API shows it, with a signed download link that works until `expires_at`. */
function presentAttachment(f: FileRow, { config, secrets, clock }: Platform) {
  const now = clock.now();
  return {
    id: f.id,
    field: f.field,
    filename: f.filename,
    content_type: f.content_type,
    size: Number(f.size),
    url: fileDownloadUrl({ config, secrets, fileId: f.id, now }),
    expires_at: toTimestamp(Math.floor(now.getTime() / 1000) * 1000 + FILE_LINK_TTL_SECONDS * 1000),
  };
}

/** `GET /v1/forms/:id/submissions`: a page of a form's submissions, filtered. */
export const listSubmissionsRoute = route({
  method: 'GET',
  path: '/v1/forms/:id/submissions',
  operationId: 'listSubmissions',
  summary: 'List a form’s submissions, newest first (or oldest first), a page at a time',
  tags: TAGS,
  auth: 'management',
  params: IdParams('form', 'form id'),
  query: Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
    cursor: Type.Optional(
      Type.String({ maxLength: 500, description: '`next_cursor` or `prev_cursor` of another page of this list' }),
    ),
    order: Type.Optional(Order),
    total: Type.Optional(
      Type.Boolean({ description: '`true` also counts every submission the filters match (`total`)' }),
    ),
    ...Filters,
  }),
  responses: { 200: { description: 'One page; `next_cursor` is null on the last', schema: SubmissionPage } },
  problems: ['not-found'],
  async handler(ctx, { params, query, principal }, { db }: Platform) {
    const { rows, nextCursor, prevCursor, total } = await listSubmissions({
      db,
      accountId: principal.accountId,
      formId: params.id,
      limit: query.limit,
      cursor: query.cursor,
      status: query.status,
      since: when(query.since, 'since'),
      until: when(query.until, 'until'),
      q: query.q,
      order: query.order,
      withTotal: query.total,
    });
    ctx.body = {
      data: rows.map(presentSubmission),
      next_cursor: nextCursor,
      prev_cursor: prevCursor,
      ...(total === undefined ? {} : { total: total.count, total_is_estimate: !total.exact }),
    };
  },
});

/** `GET /v1/submissions/:id`: a submission with its files' download links. */
export const getSubmissionRoute = route({
  method: 'GET',
  path: '/v1/submissions/:id',
  operationId: 'getSubmission',
  summary: 'Get a submission with its files and their download links',
  tags: TAGS,
  auth: 'management',
  params: IdParams('submission', 'submission id'),
  responses: { 200: { description: 'The submission', schema: SubmissionDetail } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, platform: Platform) {
    const { submission, files } = await getSubmission({
      db: platform.db,
      accountId: principal.accountId,
      id: params.id,
    });
    ctx.body = {
      ...presentSubmission(submission),
      attachments: files.map((file) => presentAttachment(file, platform)),
      autoresponse: await autoresponseOf(platform.db, principal.accountId, params.id),
    };
  },
});

/** `PATCH /v1/submissions/:id`: moves a submission between `spam` and `received`. */
export const updateSubmissionRoute = route({
  method: 'PATCH',
  path: '/v1/submissions/:id',
  operationId: 'updateSubmission',
  summary: 'Move a submission between `spam` and `received`, or mark it read or unread',
  description:
    'Marking a caught spam submission as `received` counts it toward the month’s usage and fires ' +
    '`submission.created` (webhooks, e-mail) then. Marking a received one as `spam` only ' +
    'relabels it: it stays counted, and moving it back fires nothing again. `read` is the owner’s own mark.',
  tags: TAGS,
  auth: 'management',
  params: IdParams('submission', 'submission id'),
  body: Type.Object(
    { status: Type.Optional(Status), read: Type.Optional(Type.Boolean()) },
    { additionalProperties: false, minProperties: 1 },
  ),
  responses: { 200: { description: 'The submission', schema: Submission } },
  problems: ['not-found'],
  async handler(ctx, { params, body, principal }, platform: Platform) {
    const target = { ...changeBy(ctx, principal, platform), id: params.id };
    let row = body.status ? await setSubmissionStatus({ ...target, status: body.status }) : undefined;
    if (body.read !== undefined) row = await setSubmissionRead({ ...target, read: body.read });
    ctx.body = presentSubmission(row as NonNullable<typeof row>);
  },
});

/** `DELETE /v1/submissions/:id`: a submission to the trash, or (`permanently=true`) deleted for good now. */
export const deleteSubmissionRoute = deleteRoute({
  collection: '/v1/submissions',
  operationId: 'deleteSubmission',
  summary: 'Move a submission to the trash (or, `permanently=true`, delete it for good now)',
  description:
    'In the trash (`GET /v1/submissions?deleted=true` lists it) a submission is left out of every list, read, export ' +
    'and file link for TRASH_DAYS (30), when the purge deletes it with its files; `POST /v1/submissions/restore` ' +
    'brings it back. `permanently=true` deletes it (in the trash or not) with its stored files now.',
  tags: TAGS,
  kind: 'submission',
  remove: deleteSubmission,
  forGood: deleteSubmissionForGood,
});

/** `POST /v1/submissions/restore`: submissions out of the trash. */
export const restoreSubmissionsRoute = route({
  method: 'POST',
  path: '/v1/submissions/restore',
  operationId: 'restoreSubmissions',
  summary: 'Bring submissions back from the trash, with their files',
  description:
    'A deleted submission stays in the trash TRASH_DAYS (30), hidden from every list, read, export and file link; ' +
    'ids not in the account’s trash are listed in `not_found`. A data-subject erasure or the form’s retention ' +
    'removes what the trash holds for good, as it does the rest.',
  tags: TAGS,
  auth: 'management',
  body: Type.Object(
    {
      ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 100, uniqueItems: true }),
    },
    { additionalProperties: false },
  ),
  responses: {
    200: {
      description: 'What was restored',
      schema: Type.Object({ done: Type.Array(Type.String()), not_found: Type.Array(Type.String()) }),
    },
  },
  async handler(ctx, { body, principal }, platform: Platform) {
    const { done, notFound } = await restoreSubmissions({
      ...changeBy(ctx, principal, platform),
      ids: body.ids,
      trashDays: platform.config.TRASH_DAYS,
    });
    ctx.body = { done, not_found: notFound };
  },
});

/** The submission routes, in the order the OpenAPI document lists them. */
export const submissionRoutes = [
  listSubmissionsRoute,
  exportCsvRoute,
  exportNdjsonRoute,
  exportXlsxRoute,
  getSubmissionRoute,
  updateSubmissionRoute,
  deleteSubmissionRoute,
  restoreSubmissionsRoute,
];

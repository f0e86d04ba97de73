import { Type } from '@sinclair/typebox';
import { fileDownloadUrl, FILE_LINK_TTL_SECONDS, route, toTimestamp, type Platform } from '@intake/shared';
import { deleteSubmission, getSubmission, listSubmissions, setSubmissionStatus } from '../domain/submissions';
import type { FileRow, SubmissionRow } from '../repositories/submission.repository';
import { IdParams, Nullable, Page, Timestamp } from './schemas';
import { AutoresponseStatus, autoresponseOf } from './autoresponse-status';
import { exportCsvRoute, exportNdjsonRoute } from './submission-export.routes';
import { Filters, Status, when } from './submission-filters';

const Submission = Type.Object(
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

export function presentSubmission(row: SubmissionRow) {
  return {
    id: row.id,
    form_id: row.form_id,
    status: row.status,
    received_at: toTimestamp(row.received_at),
    payload: row.payload,
    files: row.file_count,
    spam_reason: row.spam_reason,
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
  summary: 'List a form’s submissions, newest first, a page at a time',
  tags: TAGS,
  auth: 'management',
  params: IdParams('form', 'form id'),
  query: Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
    cursor: Type.Optional(Type.String({ maxLength: 500, description: '`next_cursor` of the previous page' })),
    ...Filters,
  }),
  responses: { 200: { description: 'One page; `next_cursor` is null on the last', schema: Page(Submission) } },
  problems: ['not-found'],
  async handler(ctx, { params, query, principal }, { db }: Platform) {
    const { rows, nextCursor } = await listSubmissions({
      db,
      accountId: principal.accountId,
      formId: params.id,
      limit: query.limit,
      cursor: query.cursor,
      status: query.status,
      since: when(query.since, 'since'),
      until: when(query.until, 'until'),
      q: query.q,
    });
    ctx.body = { data: rows.map(presentSubmission), next_cursor: nextCursor };
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
  summary: 'Move a submission between `spam` and `received`',
  description:
    'Marking a caught spam submission as `received` counts it toward the month’s usage and fires ' +
    '`submission.created` (webhooks, e-mail) then. Marking a received one as `spam` only ' +
    'relabels it: it stays counted, and moving it back fires nothing again.',
  tags: TAGS,
  auth: 'management',
  params: IdParams('submission', 'submission id'),
  body: Type.Object({ status: Status }, { additionalProperties: false }),
  responses: { 200: { description: 'The submission', schema: Submission } },
  problems: ['not-found'],
  async handler(ctx, { params, body, principal }, { db }: Platform) {
    ctx.body = presentSubmission(
      await setSubmissionStatus({ db, accountId: principal.accountId, id: params.id, status: body.status }),
    );
  },
});

/** `DELETE /v1/submissions/:id`: a submission and its stored files. */
export const deleteSubmissionRoute = route({
  method: 'DELETE',
  path: '/v1/submissions/:id',
  operationId: 'deleteSubmission',
  summary: 'Delete a submission and its stored files',
  tags: TAGS,
  auth: 'management',
  params: IdParams('submission', 'submission id'),
  responses: { 204: { description: 'Deleted' } },
  problems: ['not-found'],
  async handler(ctx, { params, principal }, platform: Platform) {
    await deleteSubmission({ ...platform, accountId: principal.accountId, id: params.id });
    ctx.status = 204;
  },
});

/** The submission routes, in the order the OpenAPI document lists them. */
export const submissionRoutes = [
  listSubmissionsRoute,
  exportCsvRoute,
  exportNdjsonRoute,
  getSubmissionRoute,
  updateSubmissionRoute,
  deleteSubmissionRoute,
];

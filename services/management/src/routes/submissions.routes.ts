import { Type } from '@sinclair/typebox';
import {
  fileDownloadUrl,
  FILE_LINK_TTL_SECONDS,
  problem,
  route,
  toTimestamp,
  type Platform,
  type RouteDef,
} from '@intake/shared';
import { deleteSubmission, getSubmission, listSubmissions, setSubmissionStatus } from '../domain/submissions';
import { exportSubmissions } from '../domain/export';
import type { FileRow, SubmissionRow } from '../repositories/submission.repository';
import { IdParams, Nullable, Page, Timestamp } from './schemas';

const Status = Type.Union([Type.Literal('received'), Type.Literal('spam')]);

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
  },
  { additionalProperties: false },
);

const Filters = {
  status: Type.Optional(Status),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'received at or after (inclusive)' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'received before (exclusive)' })),
  q: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'case-insensitive text searched in every payload value' }),
  ),
};

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

/**
 * A `since`/`until` the schema accepted as date-time but that is no instant (a leap second, `23:59:60`)
 * or is outside what Postgres stores: 422 rather than a query that fails.
 */
const when = (value: string | undefined, name: string) => {
  if (value === undefined) return undefined;
  const at = new Date(value);
  const year = at.getUTCFullYear();
  if (Number.isNaN(at.getTime()) || year < 1 || year > 9999)
    throw problem('validation-failed', `query/${name} is not a time that can be searched`, {
      errors: [{ field: `query/${name}`, message: 'must be a real instant between years 1 and 9999' }],
    });
  return at;
};

export function submissionRoutes(platform: Platform): RouteDef[] {
  const { db, config, secrets, clock } = platform;
  const tags = ['Submissions'];
  const attachment = (f: FileRow) => {
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
  };
  return [
    route({
      method: 'GET',
      path: '/v1/forms/:id/submissions',
      operationId: 'listSubmissions',
      summary: 'List a form’s submissions, newest first, a page at a time',
      tags,
      auth: 'management',
      params: IdParams('form', 'form id'),
      query: Type.Object({
        limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
        cursor: Type.Optional(Type.String({ maxLength: 500, description: '`next_cursor` of the previous page' })),
        ...Filters,
      }),
      responses: { 200: { description: 'One page; `next_cursor` is null on the last', schema: Page(Submission) } },
      problems: ['not-found'],
      async handler(ctx, { params, query, principal }) {
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
    }),
    ...(['csv', 'ndjson'] as const).map((format) => exportRoute(platform, format)),
    route({
      method: 'GET',
      path: '/v1/submissions/:id',
      operationId: 'getSubmission',
      summary: 'Get a submission with its files and their download links',
      tags,
      auth: 'management',
      params: IdParams('submission', 'submission id'),
      responses: { 200: { description: 'The submission', schema: SubmissionDetail } },
      problems: ['not-found'],
      async handler(ctx, { params, principal }) {
        const { submission, files } = await getSubmission({ db, accountId: principal.accountId, id: params.id });
        ctx.body = { ...presentSubmission(submission), attachments: files.map(attachment) };
      },
    }),
    route({
      method: 'PATCH',
      path: '/v1/submissions/:id',
      operationId: 'updateSubmission',
      summary: 'Move a submission between `spam` and `received`',
      description:
        'Marking a caught spam submission as `received` counts it toward the month’s usage and fires ' +
        '`submission.created` (webhooks, e-mail) then. Marking a received one as `spam` only ' +
        'relabels it: it stays counted, and moving it back fires nothing again.',
      tags,
      auth: 'management',
      params: IdParams('submission', 'submission id'),
      body: Type.Object({ status: Status }, { additionalProperties: false }),
      responses: { 200: { description: 'The submission', schema: Submission } },
      problems: ['not-found'],
      async handler(ctx, { params, body, principal }) {
        ctx.body = presentSubmission(
          await setSubmissionStatus({ db, accountId: principal.accountId, id: params.id, status: body.status }),
        );
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/submissions/:id',
      operationId: 'deleteSubmission',
      summary: 'Delete a submission and its stored files',
      tags,
      auth: 'management',
      params: IdParams('submission', 'submission id'),
      responses: { 204: { description: 'Deleted' } },
      problems: ['not-found'],
      async handler(ctx, { params, principal }) {
        await deleteSubmission({ ...platform, accountId: principal.accountId, id: params.id });
        ctx.status = 204;
      },
    }),
  ];
}

const EXPORT_TYPES = { csv: 'text/csv', ndjson: 'application/x-ndjson' } as const;

/** `GET /v1/forms/:id/export.csv` and `.ndjson`: one operation per format, so each documents its exact media type. */
function exportRoute(platform: Platform, format: 'csv' | 'ndjson'): RouteDef {
  return route({
    method: 'GET',
    path: `/v1/forms/:id/export.${format}`,
    operationId: format === 'csv' ? 'exportSubmissionsCsv' : 'exportSubmissionsNdjson',
    summary:
      format === 'csv'
        ? 'Export a form’s submissions as CSV (RFC 4180, one column per field seen), streamed'
        : 'Export a form’s submissions as NDJSON (one JSON object per line), streamed',
    description:
      format === 'csv'
        ? 'Same filters as the list, newest first. Columns: `id`, `received_at`, `status`, `files`, ' +
          'then each payload field in order of first appearance; CRLF line ends.'
        : 'Same filters as the list, newest first. Each line: `{ id, form_id, received_at, status, files, payload }`.',
    tags: ['Submissions'],
    auth: 'management',
    params: IdParams('form', 'form id'),
    query: Type.Object(Filters),
    responses: {
      200: {
        description: 'The file, as an attachment',
        contentType: EXPORT_TYPES[format],
        schema: Type.String(),
        headers: {
          'Content-Disposition': {
            description: `\`attachment; filename="<slug>-submissions.${format}"\``,
            schema: Type.String(),
          },
        },
      },
    },
    problems: ['not-found'],
    async handler(ctx, { params, query, principal }) {
      const out = await exportSubmissions({
        ...platform,
        accountId: principal.accountId,
        formId: params.id,
        format,
        status: query.status,
        since: when(query.since, 'since'),
        until: when(query.until, 'until'),
        q: query.q,
      });
      ctx.set('Content-Disposition', `attachment; filename="${out.filename}"`);
      ctx.set('Cache-Control', 'no-store');
      ctx.type = out.contentType;
      ctx.body = out.stream;
    },
  });
}

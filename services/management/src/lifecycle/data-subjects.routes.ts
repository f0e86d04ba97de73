import { Type } from '@sinclair/typebox';
import { FormProject, idPattern, toTimestamp } from '@intake/shared/contracts';
import { projectsAskedFor, type Principal } from '@intake/shared/auth';
import { routeGroup } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import {
  auditExport,
  eraseDataSubject,
  exportDataSubject,
  exportDataSubjectXlsx,
  lookUpDataSubject,
} from './data-subjects';
import { XLSX_TYPE } from '../submissions/export';
import { Timestamp } from '../platform/schemas';
import { Status } from '../submissions/submission-filters';
import { auditOf } from '../platform/audit-trail';

/**
 * A person's data across the forms one may see: editors and above (those who may delete submissions), a member or key
 * limited to projects within them alone, so a client's own staff answer that client's requests.
 */
const dataSubjectRoute = routeGroup({ tags: ['Data subjects'], auth: 'management', role: 'editor' });

/** The person's address: one e-mail address (a field value matches it trimmed and ignoring case); and a client. */
const EmailQuery = Type.Object({
  email: Type.String({
    format: 'email',
    minLength: 3,
    maxLength: 320,
    description: 'the person’s e-mail address; a submission matches when any field value equals it (trimmed, any case)',
  }),
  project_id: Type.Optional(
    Type.String({
      pattern: idPattern('project'),
      description:
        'only this project’s forms (a client’s data, for that client); without it, every form the caller may see: ' +
        'the whole account, or a limited member’s or key’s projects',
    }),
  ),
});

/** Whose data a request is about: the address, in the projects asked for or else those the caller may see. */
const subjectOf = (query: { email: string; project_id?: string }, principal: Principal) => ({
  accountId: principal.accountId,
  email: query.email,
  projects: projectsAskedFor(principal, query.project_id),
});

const SubjectSubmission = Type.Object(
  {
    id: Type.String({ description: '`sub_...`' }),
    form_id: Type.String(),
    form_name: Type.Union([Type.String(), Type.Null()], { description: 'its form’s name; null once deleted' }),
    project: FormProject,
    received_at: Timestamp,
    status: Status,
  },
  { additionalProperties: false },
);

/** `GET /v1/data-subjects/submissions?email=`: where a person's address appears, across the account's forms. */
export const findDataSubjectRoute = dataSubjectRoute({
  method: 'GET',
  path: '/v1/data-subjects/submissions',
  operationId: 'findDataSubjectSubmissions',
  summary: 'List every submission of the account in which a field value is this e-mail address',
  description:
    'Across all of the account’s forms, newest first; for answering a person’s access or erasure request. Complete ' +
    'at once: a submission stored a moment ago is found (and exported and erased) before the search index has it. ' +
    'Audited ' +
    'as `data_subject.looked_up` (the address as its sha256, who asked, how many submissions and files).',
  query: EmailQuery,
  responses: {
    200: {
      description: 'The submissions',
      schema: Type.Object({ data: Type.Array(SubjectSubmission) }, { additionalProperties: false }),
    },
  },
  async handler(ctx, { query, principal }, platform: Platform) {
    const { db } = platform;
    const audit = auditOf(ctx, principal, platform);
    const rows = await lookUpDataSubject({ db, ...subjectOf(query, principal), audit });
    ctx.body = {
      data: rows.map((r) => ({
        id: r.id,
        form_id: r.form_id,
        form_name: r.form?.name ?? null,
        project: r.form?.project ?? null,
        received_at: toTimestamp(r.received_at),
        status: r.status,
      })),
    };
  },
});

/** `GET /v1/data-subjects/export?email=`: what an owner sends the person who asked. */
export const exportDataSubjectRoute = dataSubjectRoute({
  method: 'GET',
  path: '/v1/data-subjects/export',
  operationId: 'exportDataSubject',
  summary: 'Export a person’s submissions as NDJSON, with their full payloads and file links',
  description:
    'One line per submission, newest first: `{ id, form_id, form_name, project, received_at, status, files, ' +
    'payload }` (`project`: `{ id, name }` of the form’s project, null in the default project); `files` carry ' +
    'signed download links valid for seven days, `payload` keeps the fields in the order they were posted.',
  query: EmailQuery,
  responses: {
    200: {
      description: 'The file, as an attachment',
      contentType: 'application/x-ndjson',
      schema: Type.String(),
      headers: {
        'Content-Disposition': { description: '`attachment; filename="data-subject.ndjson"`', schema: Type.String() },
      },
    },
  },
  async handler(ctx, { query, principal }, platform: Platform) {
    const audit = auditOf(ctx, principal, platform);
    await auditExport({ db: platform.db, ...subjectOf(query, principal), audit, format: 'ndjson' });
    ctx.set('Content-Disposition', 'attachment; filename="data-subject.ndjson"');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'application/x-ndjson; charset=utf-8';
    ctx.body = exportDataSubject({ ...platform, ...subjectOf(query, principal) });
  },
});

/** `GET /v1/data-subjects/export.xlsx?email=&tz=`: the same, as a workbook a spreadsheet opens. */
export const exportDataSubjectXlsxRoute = dataSubjectRoute({
  method: 'GET',
  path: '/v1/data-subjects/export.xlsx',
  operationId: 'exportDataSubjectXlsx',
  summary: 'Export a person’s submissions as an Excel workbook, for someone who asked to see their data',
  description:
    'One row per submission, newest first: `id`, `form_id`, `form` (its name), `project` (its project’s name, ' +
    'empty in the default project), `received_at` (a date cell in `tz`, an IANA zone, UTC ' +
    'by default), `status`, `_replyto`, `files` (`name: link` lines, links valid for seven days), then one column per ' +
    'field any of them has. Values are text cells exactly as posted (never formulas). Audited like the NDJSON export.',
  query: Type.Object({ ...EmailQuery.properties, tz: Type.Optional(Type.String({ maxLength: 64 })) }),
  responses: {
    200: {
      description: 'The workbook, as an attachment',
      contentType: XLSX_TYPE,
      schema: Type.String(),
      headers: {
        'Content-Disposition': { description: '`attachment; filename="data-subject.xlsx"`', schema: Type.String() },
      },
    },
  },
  async handler(ctx, { query, principal }, platform: Platform) {
    const audit = auditOf(ctx, principal, platform);
    const stream = await exportDataSubjectXlsx({
      ...platform,
      ...subjectOf(query, principal),
      zone: query.tz ?? 'UTC',
      onError: (err) => platform.logger.warn({ err }, 'a data-subject workbook failed while streaming'),
    });
    await auditExport({ db: platform.db, ...subjectOf(query, principal), audit, format: 'xlsx' });
    ctx.set('Content-Disposition', 'attachment; filename="data-subject.xlsx"');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = XLSX_TYPE;
    ctx.body = stream;
  },
});

/** `DELETE /v1/data-subjects?email=`: erases them as retention does. */
export const eraseDataSubjectRoute = dataSubjectRoute({
  method: 'DELETE',
  path: '/v1/data-subjects',
  operationId: 'eraseDataSubject',
  summary: 'Delete every submission of the account in which a field value is this e-mail address',
  description:
    'Each goes as retention removes one: its files from storage first, then its deliveries and attempts, its ' +
    'notification and idempotency rows and the submission itself. Usage already counted stays. If storage refuses, ' +
    'what was not removed stays and the answer is 503: ask again.',
  query: EmailQuery,
  responses: {
    200: {
      description: 'How many submissions were deleted',
      schema: Type.Object({ deleted: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
    },
  },
  problems: ['service-unavailable'],
  async handler(ctx, { query, principal }, platform: Platform) {
    const audit = auditOf(ctx, principal, platform);
    ctx.body = {
      deleted: await eraseDataSubject({ ...platform, ...subjectOf(query, principal), audit }),
    };
  },
});

/** The data-subject routes, in the order the OpenAPI document lists them. */
export const dataSubjectRoutes = [
  findDataSubjectRoute,
  exportDataSubjectRoute,
  exportDataSubjectXlsxRoute,
  eraseDataSubjectRoute,
];

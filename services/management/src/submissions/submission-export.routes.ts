import { Type } from '@sinclair/typebox';
import { route } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { exportSubmissions, XLSX_TYPE } from './export';
import { IdParams } from '../platform/schemas';
import { auditOf } from '../platform/audit-trail';
import { Filters, when } from './submission-filters';

const EXPORT_TYPES = { csv: 'text/csv', ndjson: 'application/x-ndjson', xlsx: XLSX_TYPE } as const;

type Format = keyof typeof EXPORT_TYPES;

const DOCS: Record<Format, { operationId: string; summary: string; description: string }> = {
  csv: {
    operationId: 'exportSubmissionsCsv',
    summary: 'Export a form’s submissions as CSV (RFC 4180, one column per field seen), streamed',
    description:
      'Same filters as the list, newest first. Columns: `id`, `received_at`, `status`, `files`, `spam_score`, ' +
      '`spam_reasons`, `project` (the project’s name, only for a form in a project other than the default), then ' +
      'each payload field in order of first appearance; CRLF line ends. A cell starting with ' +
      '= + - @ (a formula to a spreadsheet, after a tab, CR or LF too) gets a leading apostrophe. `bom=true` begins the file with a byte-order ' +
      'mark, so Excel and LibreOffice read it as UTF-8 (the console asks for it); for a spreadsheet, prefer `export.xlsx`.',
  },
  ndjson: {
    operationId: 'exportSubmissionsNdjson',
    summary: 'Export a form’s submissions as NDJSON (one JSON object per line), streamed',
    description:
      'Same filters as the list, newest first. Each line: `{ id, form_id, project, received_at, status, files, ' +
      'spam_score, spam_reasons, payload }`; `project` is `{ id, name }` of the form’s project, null in the ' +
      'account’s default project.',
  },
  xlsx: {
    operationId: 'exportSubmissionsXlsx',
    summary: 'Export a form’s submissions as an Excel workbook, streamed',
    description:
      'Same filters and columns as the CSV, newest first, in one worksheet. Every posted value is a text cell exactly ' +
      'as posted (never a formula, so no apostrophe is added), `received_at` a date cell in the time zone `tz` ' +
      '(IANA, default UTC; named in its header), `files` and `spam_score` numbers. Characters a workbook cannot hold ' +
      '(control characters other than tab and line ends) become U+FFFD, and a value over Excel’s 32,767 characters ' +
      'is cut with a note (the NDJSON export has every character).',
  },
};

const EXTRA_QUERY = {
  csv: {
    bom: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'begin with a UTF-8 byte-order mark' }),
    ),
  },
  ndjson: {},
  xlsx: {
    tz: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'the IANA time zone of the received times, e.g. `Europe/Paris` (default `UTC`)',
      }),
    ),
  },
};

/** `GET /v1/forms/:id/export.csv`, `.ndjson` and `.xlsx`: one operation per format, each with its exact media type. */
function exportRoute(format: Format) {
  return route({
    method: 'GET',
    path: `/v1/forms/:id/export.${format}`,
    ...DOCS[format],
    tags: ['Submissions'],
    auth: 'management',
    params: IdParams('form', 'form id'),
    query: Type.Object({ ...Filters, ...EXTRA_QUERY[format] }),
    responses: {
      200: {
        description: 'The file, as an attachment',
        contentType: EXPORT_TYPES[format],
        schema: Type.String(),
        headers: {
          'Content-Disposition': {
            description:
              `\`attachment; filename="<slug>-submissions.${format}"\`; for a form in a project other than the ` +
              `default, the project, the form and the day of the export (in \`tz\` when given, else UTC), e.g. ` +
              `\`attachment; filename="acme-dental-contact-2026-12-02.${format}"\`, with RFC 6266's \`filename*\` ` +
              `(UTF-8) when either name has letters outside ASCII, which \`filename\` then leaves out`,
            schema: Type.String(),
          },
        },
      },
    },
    problems: format === 'xlsx' ? ['not-found', 'validation-failed'] : ['not-found'],
    async handler(ctx, { params, query: given, principal }, platform: Platform) {
      // The union of the formats' queries: each format's own parameters are checked by its schema.
      const query = given as typeof given & { tz?: string; bom?: string };
      const out = await exportSubmissions({
        ...platform,
        accountId: principal.accountId,
        formId: params.id,
        format,
        status: query.status,
        since: when(query.since, 'since'),
        until: when(query.until, 'until'),
        q: query.q,
        timeZone: typeof query.tz === 'string' ? query.tz : undefined,
        bom: query.bom === 'true',
      });
      // An export is a read an owner must be able to trace: who took which of the form's submissions, and when.
      const filters = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
      await auditOf(ctx, principal, platform).record(platform.db, {
        action: 'submissions.exported',
        target: { type: 'form', id: params.id },
        details: { format, filters },
      });
      // RFC 6266, by the `content-disposition` package: `filename*` when the name is not ASCII.
      ctx.attachment(out.name.filename, { fallback: out.name.fallback });
      ctx.set('Cache-Control', 'no-store');
      ctx.type = out.contentType;
      ctx.body = out.stream;
    },
  });
}

/** `GET /v1/forms/:id/export.csv`. */
export const exportCsvRoute = exportRoute('csv');
/** `GET /v1/forms/:id/export.ndjson`. */
export const exportNdjsonRoute = exportRoute('ndjson');
/** `GET /v1/forms/:id/export.xlsx`. */
export const exportXlsxRoute = exportRoute('xlsx');

import { Type } from '@sinclair/typebox';
import { route, type Platform } from '@intake/shared';
import { exportSubmissions, XLSX_TYPE } from './export';
import { IdParams } from '../platform/schemas';
import { Filters, when } from './submission-filters';

const EXPORT_TYPES = { csv: 'text/csv', ndjson: 'application/x-ndjson', xlsx: XLSX_TYPE } as const;

type Format = keyof typeof EXPORT_TYPES;

const DOCS: Record<Format, { operationId: string; summary: string; description: string }> = {
  csv: {
    operationId: 'exportSubmissionsCsv',
    summary: 'Export a form’s submissions as CSV (RFC 4180, one column per field seen), streamed',
    description:
      'Same filters as the list, newest first. Columns: `id`, `received_at`, `status`, `files`, `spam_score`, ' +
      '`spam_reasons`, then each payload field in order of first appearance; CRLF line ends. A cell starting with ' +
      '= + - @ (a formula to a spreadsheet, after a tab, CR or LF too) gets a leading apostrophe. `bom=true` begins the file with a byte-order ' +
      'mark, so Excel and LibreOffice read it as UTF-8 (the console asks for it); for a spreadsheet, prefer `export.xlsx`.',
  },
  ndjson: {
    operationId: 'exportSubmissionsNdjson',
    summary: 'Export a form’s submissions as NDJSON (one JSON object per line), streamed',
    description:
      'Same filters as the list, newest first. Each line: `{ id, form_id, received_at, status, files, payload }`.',
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
            description: `\`attachment; filename="<slug>-submissions.${format}"\``,
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
      ctx.set('Content-Disposition', `attachment; filename="${out.filename}"`);
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

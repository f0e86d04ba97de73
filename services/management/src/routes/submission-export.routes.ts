import { Type } from '@sinclair/typebox';
import { route, type Platform } from '@intake/shared';
import { exportSubmissions } from '../domain/export';
import { IdParams } from './schemas';
import { Filters, when } from './submission-filters';

const EXPORT_TYPES = { csv: 'text/csv', ndjson: 'application/x-ndjson' } as const;

/** `GET /v1/forms/:id/export.csv` and `.ndjson`: one operation per format, so each documents its exact media type. */
function exportRoute(format: 'csv' | 'ndjson') {
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
    async handler(ctx, { params, query, principal }, platform: Platform) {
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

/** `GET /v1/forms/:id/export.csv`. */
export const exportCsvRoute = exportRoute('csv');
/** `GET /v1/forms/:id/export.ndjson`. */
export const exportNdjsonRoute = exportRoute('ndjson');

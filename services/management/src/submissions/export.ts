import { PassThrough, Readable, pipeline } from 'node:stream';
import { stringify } from 'csv-stringify';
import { toTimestamp, type FormProject } from '@intake/shared/contracts';
import { type Platform } from '@intake/shared/runtime';
import {
  findPayloadFieldNames,
  listSubmissionsPage,
  type SubmissionFilter,
  type SubmissionRow,
} from './submission.repository';
import { getForm } from './forms';
import { projectsOfForms } from './projects';
import { spamReasonsOf, spamScoreOf } from './spam-marks';
import { checkTimeZone, wallClock, xlsxStream, xlsxText } from './export-xlsx';

export type ExportFormat = 'csv' | 'ndjson' | 'xlsx';

const FIXED_COLUMNS = ['id', 'received_at', 'status', 'files', 'spam_score', 'spam_reasons'];
/** After the fixed columns, for a form in a project (not the account's default): the project's name in every row. */
const PROJECT_COLUMN = 'project';

/** What a download is called: its name, and the name for clients that read only ASCII (RFC 6266's `filename`). */
export interface ExportFileName {
  filename: string;
  fallback: string;
}

/**
 * Text as a part of a file name: lower case, runs of anything but letters and digits as one `-`, at most 50
 * characters; `ascii` also drops accents and every other letter outside a–z (for RFC 6266's `filename`).
 */
export function fileSlug(text: string, ascii = false): string {
  const letters = ascii ? text.normalize('NFKD').replace(/\p{M}/gu, '') : text.normalize('NFKC');
  const slug = letters
    .toLowerCase()
    .replace(ascii ? /[^a-z0-9]+/g : /[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
  return [...slug].slice(0, 50).join('').replace(/-+$/, '');
}

/**
 * A form's export file name: `<slug>-submissions.<ext>` as before, or, for a form in a project, the client, the
 * form and the day of the export in `zone` (`acme-dental-contact-2026-12-02.csv`); its ASCII fallback leaves out
 * what has no ASCII spelling.
 */
export function exportFileName(
  form: { name: string; slug: string },
  project: FormProject,
  props: { ext: string; now: Date; zone: string },
): ExportFileName {
  if (!project) {
    const filename = `${form.slug}-submissions.${props.ext}`;
    return { filename, fallback: filename };
  }
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: props.zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(props.now);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const day = `${part('year')}-${part('month')}-${part('day')}`;
  const named = (ascii: boolean) =>
    [fileSlug(project.name, ascii), fileSlug(form.name, ascii) || (ascii ? '' : form.slug), day]
      .filter(Boolean)
      .join('-') + `.${props.ext}`;
  return { filename: named(false), fallback: named(true) };
}

/** The media type of an Excel workbook. */
export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/**
 * Every matching submission, newest first, read in keyset batches of `batchSize` rows, so a
 * hundred thousand rows never sit in memory. Rows received after `until` (the export's start
 * when not given) are left out, so a submission arriving mid-export cannot bring an unknown field.
 */
async function* submissionsOf(
  props: Pick<Platform, 'db'> & SubmissionFilter & { batchSize: number },
): AsyncGenerator<SubmissionRow> {
  const { db, batchSize, ...filter } = props;
  let after: { receivedAt: Date; id: string } | undefined;
  for (;;) {
    const rows = await listSubmissionsPage(db, { ...filter, after, limit: batchSize });
    yield* rows;
    const last = rows[rows.length - 1];
    if (!last || rows.length < batchSize) return;
    after = { receivedAt: last.received_at, id: last.id };
  }
}

/**
 * A payload value or field name as a CSV cell. Both come from anyone on the internet, and spreadsheet
 * programs run a cell that starts with = + - @ (or a tab, CR or LF before them) as a formula: such cells
 * get a leading apostrophe (OWASP's CSV-injection advice; a line feed too, which some programs skip), which Excel
 * shows. Not a plain number: a sign, then digits in groups split by single spaces or dots (`+41 44 123 45 67`,
 * `-12.5`), which holds no name, reference, call or operator but the sign, so a spreadsheet can only show it as the
 * number or the text it is. A hyphenated `+1-555-0100` keeps its apostrophe: it would be computed as a subtraction.
 * NDJSON exports names and values untouched.
 */
export function csvCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
}

/** What a spreadsheet takes for the start of a formula. */
const FORMULA_START = /^[=+\-@\t\r\n]/;
/** A signed number or phone number: digit groups split by one space or dot, nothing else. */
const PLAIN_NUMBER = /^[+-]\d+(?:[ .]\d+)*$/;

/**
 * Streams a form's submissions as CSV (RFC 4180: CRLF line ends, quoted where needed, a header
 * row of `id, received_at, status, files, spam_score, spam_reasons` (the reasons space-separated), `project` for a form
 * in a project, and one column per payload field seen) or as NDJSON (one JSON object per line, with the form's
 * `project`). Two passes: Postgres lists the field names, then rows stream.
 */
export async function exportSubmissions(
  props: Pick<Platform, 'db' | 'clock' | 'logger'> &
    Omit<SubmissionFilter, 'formId'> & {
      formId: string;
      format: ExportFormat;
      batchSize?: number;
      /** xlsx: the zone of the received times (default UTC). */
      timeZone?: string;
      /** csv: begin with a byte-order mark, so spreadsheet programs read it as UTF-8. */
      bom?: boolean;
    },
): Promise<{ name: ExportFileName; contentType: string; stream: Readable }> {
  const { db, clock, logger, format, batchSize = 1000, timeZone, bom, ...given } = props;
  const zone = checkTimeZone(timeZone ?? 'UTC');
  const form = await getForm({ db, accountId: given.accountId, id: given.formId });
  const project = (await projectsOfForms(db, given.accountId, [form]))(form);
  const now = clock.now();
  const name = exportFileName(form, project, { ext: format, now, zone });
  const filter: SubmissionFilter = {
    ...given,
    until: given.until && given.until < now ? given.until : new Date(now.getTime() + 1),
  };
  const rows = submissionsOf({ db, batchSize, ...filter });
  const onError = (err: Error | null) => {
    if (err && (err as { code?: string }).code !== 'ERR_STREAM_PREMATURE_CLOSE')
      logger.warn({ err, formId: form.id }, 'export stream failed');
  };
  if (format === 'ndjson') {
    const lines = Readable.from(
      (async function* () {
        for await (const row of rows) {
          const line = {
            id: row.id,
            form_id: row.form_id,
            project,
            received_at: toTimestamp(row.received_at),
            status: row.status,
            files: row.file_count,
            spam_score: spamScoreOf(row),
            spam_reasons: spamReasonsOf(row),
            payload: row.payload,
          };
          yield `${JSON.stringify(line)}\n`;
        }
      })(),
    );
    return {
      name,
      contentType: 'application/x-ndjson; charset=utf-8',
      stream: pipeline(lines, new PassThrough(), onError),
    };
  }
  const fields = await findPayloadFieldNames(db, filter);
  const client = project ? [project.name] : [];
  if (format === 'xlsx') return xlsxExport({ name, zone, client, fields, rows, onError });
  const records = Readable.from(
    (async function* () {
      yield [...FIXED_COLUMNS, ...(project ? [PROJECT_COLUMN] : []), ...fields.map(csvCell)];
      for await (const row of rows)
        yield [
          row.id,
          toTimestamp(row.received_at),
          row.status,
          String(row.file_count),
          csvCell(spamScoreOf(row)),
          csvCell(spamReasonsOf(row).join(' ')),
          ...client.map(csvCell),
          ...fields.map((f) => csvCell(Object.hasOwn(row.payload, f) ? row.payload[f] : undefined)),
        ];
    })(),
  );
  // A cell holding a bare CR or LF is quoted too (RFC 4180): spreadsheets and Python's csv end a row at either.
  const csv = stringify({ bom: bom === true, record_delimiter: 'windows', quoted_match: /[\r\n]/ });
  return {
    name,
    contentType: 'text/csv; charset=utf-8; header=present',
    stream: pipeline(records, csv, onError),
  };
}

/** The rows as an Excel workbook (export-xlsx.ts): the CSV's columns, received times in `zone`. */
function xlsxExport(props: {
  name: ExportFileName;
  zone: string;
  /** The project's name, for a form in a project; else nothing. */
  client: string[];
  fields: string[];
  rows: AsyncGenerator<SubmissionRow>;
  onError: (err: Error) => void;
}): { name: ExportFileName; contentType: string; stream: Readable } {
  const { zone, client, fields, rows } = props;
  const at = wallClock(zone);
  const values = (async function* () {
    for await (const row of rows)
      yield [
        row.id,
        { at: at(row.received_at) },
        row.status,
        row.file_count,
        spamScoreOf(row),
        xlsxText(spamReasonsOf(row).join(' ')),
        ...client.map(xlsxText),
        ...fields.map((f) => (Object.hasOwn(row.payload, f) ? xlsxText(row.payload[f]) : null)),
      ];
  })();
  const header = [
    ...FIXED_COLUMNS.map((c) => (c === 'received_at' ? `received_at (${zone})` : c)),
    ...(client.length ? [PROJECT_COLUMN] : []),
    ...fields,
  ];
  return {
    name: props.name,
    contentType: XLSX_TYPE,
    stream: xlsxStream('Submissions', header, values, props.onError),
  };
}

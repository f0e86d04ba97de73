import { Readable } from 'node:stream';
import { sha256Hex, type Queryable } from '@intake/shared/base';
import { formProject, normaliseEmail, toTimestamp, type FormProject } from '@intake/shared/contracts';
import { type AuditAction } from '@intake/shared/audit';
import { fileDownloadUrl } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import {
  findFilesOf,
  findFormsNamed,
  findSubjectFieldNames,
  findSubjectSubmissions,
  pageOfSubjectSubmissions,
  type SubjectSubmission,
  type SubjectScope,
  type SubjectSubmissionText,
} from './data-subject.repository';
import type { FileRow } from '../submissions/submission.repository';
import { checkTimeZone, wallClock, xlsxStream, xlsxText } from '../submissions/export-xlsx';
import { purgeSubmissions } from './purge';
import type { Audit } from '../platform/audit-trail';

/**
 * Records a data-subject request in the audit log: who asked, what (`looked_up`, `exported`, `erased`), the address
 * as its sha256 (the log keeps no address of the person), and how many submissions and files it covered.
 */
async function auditRequest(
  db: Queryable,
  audit: Audit,
  action: Extract<AuditAction, `data_subject.${string}`>,
  props: { email: string; submissions: number; files: number; format?: 'ndjson' | 'xlsx' },
): Promise<void> {
  await audit.record(db, {
    action,
    target: { type: 'data_subject', id: null },
    details: {
      email_sha256: sha256Hex(normaliseEmail(props.email)),
      submissions: props.submissions,
      files: props.files,
      ...(props.format ? { format: props.format } : {}),
    },
  });
}

/** A form as a person's results name it: its name and its client (null in the account's default project). */
export interface NamedForm {
  name: string;
  project: FormProject;
}

/**
 * The names of the forms `ids` by id, read once each: `known` keeps those already read (an export's earlier
 * batches'). A form deleted since has none.
 */
async function namesOfForms(
  db: Queryable,
  accountId: string,
  ids: string[],
  known = new Map<string, NamedForm>(),
): Promise<Map<string, NamedForm>> {
  const rows = await findFormsNamed(
    db,
    accountId,
    ids.filter((id) => !known.has(id)),
  );
  for (const row of rows) known.set(row.id, { name: row.name, project: formProject(row) });
  return known;
}

/** The person's submissions and how many files they hold. */
async function subjectScope(props: Pick<Platform, 'db'> & SubjectScope) {
  const rows = await findDataSubject(props);
  const files = await findFilesOf(
    props.db,
    rows.map((r) => r.id),
  );
  return { rows, files: files.length };
}

/** The lookup, audited; each submission with its form's name and client (null for a form deleted since). */
export async function lookUpDataSubject(
  props: Pick<Platform, 'db'> & SubjectScope & { audit: Audit },
): Promise<(SubjectSubmission & { form: NamedForm | null })[]> {
  const { rows, files } = await subjectScope(props);
  await auditRequest(props.db, props.audit, 'data_subject.looked_up', {
    email: props.email,
    submissions: rows.length,
    files,
  });
  const forms = await namesOfForms(
    props.db,
    props.accountId,
    rows.map((r) => r.form_id),
  );
  return rows.map((r) => ({ ...r, form: forms.get(r.form_id) ?? null }));
}

/** Every submission of the account with a field whose value is `email`. */
export async function findDataSubject(props: Pick<Platform, 'db'> & SubjectScope): Promise<SubjectSubmission[]> {
  const { accountId, projects } = props;
  return findSubjectSubmissions(props.db, { accountId, projects, email: normaliseEmail(props.email) });
}

/** What the person asked for, one JSON line per submission; the payload is spliced in as stored (posted order). */
function exportLine(
  row: {
    id: string;
    form_id: string;
    received_at: Date;
    status: string;
    payload_text: string;
    directions: Record<string, string> | null;
  },
  form: NamedForm | undefined,
  files: FileRow[],
  platform: Pick<Platform, 'config' | 'secrets' | 'clock'>,
): string {
  const now = platform.clock.now();
  const head = JSON.stringify({
    id: row.id,
    form_id: row.form_id,
    form_name: form?.name ?? null,
    project: form?.project ?? null,
    received_at: toTimestamp(row.received_at),
    status: row.status,
    files: files.map((f) => ({
      id: f.id,
      field: f.field,
      filename: f.filename,
      content_type: f.content_type,
      size: Number(f.size),
      url: fileDownloadUrl({ config: platform.config, secrets: platform.secrets, fileId: f.id, now }),
    })),
    // What the post's control fields asked (`_subject`, `_replyto`): the visitor's words and address too.
    ...(row.directions ? { directions: row.directions } : {}),
  });
  return `${head.slice(0, -1)},"payload":${row.payload_text}}\n`;
}

/** The person's submissions with their files and forms, newest first, read in keyset batches of `batchSize`. */
async function* subjectSubmissions(
  props: Pick<Platform, 'db'> & SubjectScope & { batchSize?: number },
): AsyncGenerator<{ row: SubjectSubmissionText; form: NamedForm | undefined; files: FileRow[] }> {
  const { db, accountId, projects } = props;
  const email = normaliseEmail(props.email);
  const limit = props.batchSize ?? 500;
  const forms = new Map<string, NamedForm>();
  let after: { receivedAt: Date; id: string } | undefined;
  for (;;) {
    const rows = await pageOfSubjectSubmissions(db, { accountId, projects, email, limit, after });
    const files = await findFilesOf(
      db,
      rows.map((r) => r.id),
    );
    await namesOfForms(
      db,
      accountId,
      rows.map((r) => r.form_id),
      forms,
    );
    for (const row of rows)
      yield { row, form: forms.get(row.form_id), files: files.filter((f) => f.submission_id === row.id) };
    const last = rows[rows.length - 1];
    if (!last || rows.length < limit) return;
    after = { receivedAt: last.received_at, id: last.id };
  }
}

/**
 * The person's submissions as NDJSON, streamed in keyset batches of `batchSize` (memory stays flat however many
 * there are): `{ id, form_id, form_name, project, received_at, status, files: [{ ..., url }], payload }` per line,
 * file links signed for the usual seven days.
 */
export function exportDataSubject(
  props: Pick<Platform, 'db' | 'config' | 'secrets' | 'clock'> &
    SubjectScope & {
      batchSize?: number;
    },
): Readable {
  return Readable.from(
    (async function* () {
      for await (const { row, form, files } of subjectSubmissions(props)) yield exportLine(row, form, files, props);
    })(),
  );
}

/**
 * The person's submissions as an Excel workbook (export-xlsx.ts: text cells exactly as posted, received times as
 * dates in `zone`): one row each, newest first, with its form's name and project (empty in the default project), their
 * files as `name: link` lines in one cell, then a column per field name any of them has.
 */
export async function exportDataSubjectXlsx(
  props: Pick<Platform, 'db' | 'config' | 'secrets' | 'clock'> &
    SubjectScope & {
      zone: string;
      onError: (err: Error) => void;
    },
): Promise<Readable> {
  const zone = checkTimeZone(props.zone);
  const fields = await findSubjectFieldNames(props.db, {
    accountId: props.accountId,
    projects: props.projects,
    email: normaliseEmail(props.email),
  });
  const at = wallClock(zone);
  const now = props.clock.now();
  const link = (f: FileRow) =>
    `${f.filename}: ${fileDownloadUrl({ config: props.config, secrets: props.secrets, fileId: f.id, now })}`;
  const rows = (async function* () {
    for await (const { row, form, files } of subjectSubmissions(props)) {
      const payload = JSON.parse(row.payload_text) as Record<string, unknown>;
      yield [
        row.id,
        row.form_id,
        xlsxText(form?.name ?? ''),
        xlsxText(form?.project?.name ?? ''),
        { at: at(row.received_at) },
        row.status,
        xlsxText(row.directions?.['reply_to'] ?? ''),
        xlsxText(files.map(link).join('\n')),
        ...fields.map((f) => (Object.hasOwn(payload, f) ? xlsxText(payload[f]) : null)),
      ];
    }
  })();
  const header = [
    'id',
    'form_id',
    'form',
    'project',
    `received_at (${zone})`,
    'status',
    '_replyto',
    'files',
    ...fields,
  ];
  return xlsxStream('Submissions', header, rows, props.onError);
}

/** The export, audited before it streams: what it covers is counted then. */
export async function auditExport(
  props: Pick<Platform, 'db'> & SubjectScope & { audit: Audit; format: 'ndjson' | 'xlsx' },
): Promise<void> {
  const { rows, files } = await subjectScope(props);
  await auditRequest(props.db, props.audit, 'data_subject.exported', {
    email: props.email,
    submissions: rows.length,
    files,
    format: props.format,
  });
}

/**
 * Erases the person's submissions as retention does (files first, then every row that holds their data); audited
 * with what went.
 */
export async function eraseDataSubject(
  props: Pick<Platform, 'db' | 'blobs' | 'logger' | 'clock'> & SubjectScope & { audit: Audit },
): Promise<number> {
  const { rows, files } = await subjectScope(props);
  const deleted = await purgeSubmissions({ ...props, rows });
  await auditRequest(props.db, props.audit, 'data_subject.erased', { email: props.email, submissions: deleted, files });
  return deleted;
}

import type { Knex } from 'knex';
import type { Queryable, StoredSubmission, SubmissionStatus } from '@intake/shared';

export type { SubmissionStatus };

export interface SubmissionRow extends StoredSubmission {
  file_count: number;
  file_bytes: string | number;
  /** The spam classifier's score (null: it did not run) and every reason the spam filter recorded (null: none). */
  spam_score: number | null;
  spam_reasons: string[] | null;
  /** When the owner first opened or marked it read; null: unread. */
  read_at: Date | null;
}

export interface FileRow {
  id: string;
  submission_id: string;
  account_id: string;
  field: string;
  filename: string;
  content_type: string;
  size: string | number;
  storage_key: string;
}

export interface SubmissionFilter {
  accountId: string;
  formId: string;
  status?: SubmissionStatus;
  since?: Date;
  until?: Date;
  /** Case-insensitive substring over payload values. */
  q?: string;
}

/** Newest-first position: rows strictly after this one in (received_at DESC, id DESC) order. */
export interface Position {
  receivedAt: Date;
  id: string;
}

const COLUMNS = [
  'id',
  'account_id',
  'form_id',
  'status',
  'payload',
  'file_count',
  'file_bytes',
  'spam_reason',
  'spam_score',
  'spam_reasons',
  'received_at',
  'read_at',
];

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The filter's rows; `byAccount` false leaves out the account, for a form already known to be the account's. */
function filtered(db: Queryable, f: SubmissionFilter, byAccount = true): Knex.QueryBuilder {
  const query = db('submissions').where(
    byAccount ? { account_id: f.accountId, form_id: f.formId } : { form_id: f.formId },
  );
  if (f.status) query.where('status', f.status);
  if (f.since) query.where('received_at', '>=', f.since);
  if (f.until) query.where('received_at', '<', f.until);
  if (f.q) {
    // The search document's trigram index (migration 012) finds them. The document is the values one per line, so
    // text without a line break matches it only within one value; with one, each value is tested as well.
    const pattern = `%${escapeLike(f.q)}%`;
    query.whereRaw('intake_search_document(submissions.payload) ILIKE ?', [pattern]);
    if (/[\r\n]/.test(f.q))
      query.whereRaw('EXISTS (SELECT 1 FROM json_each_text(submissions.payload) AS kv WHERE kv.value ILIKE ?)', [
        pattern,
      ]);
  }
  return query;
}

/** The list's order by received time: `desc` newest first (the default), `asc` oldest first. */
export type Order = 'asc' | 'desc';

/**
 * One page in `order` (newest first unless `asc`), strictly after `after` in that order when given (or at or after
 * it, with `inclusive`).
 */
export async function listSubmissionsPage(
  db: Queryable,
  f: SubmissionFilter & { after?: Position; limit: number; order?: Order; inclusive?: boolean },
): Promise<SubmissionRow[]> {
  const order = f.order ?? 'desc';
  const query = filtered(db, f);
  if (f.after) {
    const op = (order === 'desc' ? '<' : '>') + (f.inclusive ? '=' : '');
    query.whereRaw(`(received_at, id) ${op} (?, ?)`, [f.after.receivedAt, f.after.id]);
  }
  return query
    .orderBy([
      { column: 'received_at', order },
      { column: 'id', order },
    ])
    .limit(f.limit)
    .select(COLUMNS);
}

/** The ids of every submission the filter matches, newest first. */
export async function findSubmissionIds(db: Queryable, f: SubmissionFilter): Promise<string[]> {
  return filtered(db, f)
    .orderBy([
      { column: 'received_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .pluck('id');
}

/** Marks a submission read (now) or unread. */
export async function updateSubmissionRead(
  db: Queryable,
  accountId: string,
  id: string,
  readAt: Date | null,
): Promise<SubmissionRow | undefined> {
  // Read again later keeps when it was first read.
  const value = readAt ? db.raw('COALESCE(read_at, ?)', [readAt]) : null;
  const [row] = await db('submissions')
    .where({ account_id: accountId, id })
    .update({ read_at: value })
    .returning(COLUMNS);
  return row as SubmissionRow | undefined;
}

/**
 * The field names of the matching submissions in the order they first appear in an export
 * (newest submission first, each in posted order): a key's first appearance is the newest
 * submission that has it, and its place there.
 */
export async function findPayloadFieldNames(db: Queryable, f: SubmissionFilter): Promise<string[]> {
  const firstAppearances = filtered(db, f)
    .crossJoin(db.raw('json_object_keys(submissions.payload) WITH ORDINALITY AS k(key, ord)'))
    .distinctOn('k.key')
    .orderBy([
      { column: 'k.key' },
      { column: 'submissions.received_at', order: 'desc' },
      { column: 'submissions.id', order: 'desc' },
      { column: 'k.ord' },
    ])
    .select('k.key', 'k.ord', 'submissions.received_at as received_at', 'submissions.id as submission_id');
  const rows: { key: string }[] = await db
    .from(firstAppearances.as('first'))
    .orderBy([{ column: 'received_at', order: 'desc' }, { column: 'submission_id', order: 'desc' }, { column: 'ord' }])
    .select('key');
  return rows.map((r) => r.key);
}

export async function findSubmission(
  db: Queryable,
  accountId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<SubmissionRow | undefined> {
  const query = db('submissions').where({ account_id: accountId, id });
  if (options.forUpdate) query.forUpdate();
  return query.first(COLUMNS);
}

export async function findSubmissionFiles(db: Queryable, accountId: string, submissionId: string): Promise<FileRow[]> {
  return db('submission_files').where({ account_id: accountId, submission_id: submissionId }).orderBy('id');
}

export async function updateSubmissionStatus(
  db: Queryable,
  accountId: string,
  id: string,
  status: SubmissionStatus,
  spamReason: string | null,
): Promise<SubmissionRow> {
  const [row] = await db('submissions')
    .where({ account_id: accountId, id })
    .update({ status, spam_reason: spamReason })
    .returning(COLUMNS);
  return row as SubmissionRow;
}

/** Deletes the submission and every copy of its data: files (rows), webhook deliveries and their log, its idempotency key. */
export async function deleteSubmissionRow(db: Queryable, accountId: string, id: string): Promise<void> {
  await db('deliveries').where({ account_id: accountId, submission_id: id }).delete();
  await db('idempotency_keys')
    .whereIn('form_id', db('submissions').where({ account_id: accountId, id }).select('form_id'))
    .andWhere({ submission_id: id })
    .delete();
  await db('submissions').where({ account_id: accountId, id }).delete();
}

/** A stored file by id alone: the signed link is its authorisation. */
export async function findFileById(db: Queryable, id: string): Promise<FileRow | undefined> {
  return db('submission_files').where({ id }).first();
}

/** How many submissions a count reads before it settles for the planner's estimate. */
export const EXACT_COUNT_UP_TO = 10_000;

/**
 * How many submissions the filter matches: exact up to `exactUpTo` (the count reads at most that many rows plus
 * one), beyond it Postgres's planner estimate, marked `exact: false` and shown as "about N": an exact count of a
 * million-row form reads a million rows, however it is indexed. Without a search, a filter the planner puts at over
 * twice the bound is not counted at all: reading 10,001 rows took 48 ms in a form of 1,000,000 (3 ms for the 9,500 of a
 * form of 10,000). A search's estimate is too rough for that (a word in 1,000 rows was estimated at 21). The form
 * must be the account's (callers check): the estimate leaves the account out.
 */
export async function countOrEstimate(
  db: Queryable,
  f: SubmissionFilter,
  exactUpTo = EXACT_COUNT_UP_TO,
): Promise<{ count: number; exact: boolean }> {
  if (!f.q) {
    const estimate = await plannerEstimate(db, f);
    if (estimate > 2 * exactUpTo) return { count: estimate, exact: false };
  }
  const capped = await db
    .from(
      filtered(db, f)
        .select(db.raw('1'))
        .limit(exactUpTo + 1)
        .as('capped'),
    )
    .count<{ n: string }[]>('* as n')
    .first();
  const count = Number(capped?.n ?? 0);
  if (count <= exactUpTo) return { count, exact: true };
  return { count: Math.max(await plannerEstimate(db, f), exactUpTo + 1), exact: false };
}

/**
 * The planner's row estimate for the filter, without the account: the planner takes account and form for independent
 * and multiplies their shares, which in a table of 5 million rows across forms put 950,000 rows of one form at 202,316.
 */
async function plannerEstimate(db: Queryable, f: SubmissionFilter): Promise<number> {
  const { sql, bindings } = filtered(db, f, false).select('id').toSQL();
  const { rows } = await (db as Knex).raw<{ rows: { 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }[] }>(
    `EXPLAIN (FORMAT JSON) ${sql}`,
    bindings as Knex.RawBinding[],
  );
  return Math.round(rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
}

import type { Knex } from 'knex';
import type { Queryable } from '@intake/shared/base';
import type { StoredSubmission, SubmissionStatus } from '@intake/shared/contracts';

export type { SubmissionStatus };

export interface SubmissionRow extends StoredSubmission {
  file_count: number;
  file_bytes: string | number;
  /** The spam classifier's score (null: it did not run) and every reason the spam filter recorded (null: none). */
  spam_score: number | null;
  spam_reasons: string[] | null;
  /** When the owner first opened or marked it read; null: unread. */
  read_at: Date | null;
  /** When delete-after-delivery emptied it (a tombstone: no fields, no files); null: whole. */
  purged_at: Date | null;
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
  /** Substring over payload values, ignoring case and accents. */
  q?: string;
}

/** Newest-first position: rows strictly after this one in (received_at DESC, id DESC) order. */
export interface Position {
  receivedAt: Date;
  id: string;
}

/** A submission row's columns, as every read of one selects them. */
export const COLUMNS = [
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
  'purged_at',
  'directions',
];

/**
 * The filter's rows; `byAccount` false leaves out the account, for a form already known to be the account's. `from`
 * takes them from a subquery named `submissions` instead of the table.
 */
function filtered(db: Queryable, f: SubmissionFilter, byAccount = true, from?: Knex.Raw): Knex.QueryBuilder {
  const query: Knex.QueryBuilder = from ? db.from(from) : db('submissions');
  query.where(byAccount ? { account_id: f.accountId, form_id: f.formId } : { form_id: f.formId });
  // The trash is no part of a form's submissions (its callers have checked the form is not in it).
  query.whereNull('submissions.deleted_at');
  if (f.status) query.where('status', f.status);
  if (f.since) query.where('received_at', '>=', f.since);
  if (f.until) query.where('received_at', '<', f.until);
  if (f.q) {
    // The exact test; the search index (migration 016, see `matching`) finds the candidates. The document is the
    // values one per line, so text without a line break matches it only within one value; with one, each value is
    // tested as well. Both sides are folded (accents and case, migration 043) by the same function.
    query.whereRaw('intake_search_document(submissions.payload) ILIKE intake_search_pattern(?)', [f.q]);
    if (/[\r\n]/.test(f.q))
      query.whereRaw(
        'EXISTS (SELECT 1 FROM json_each_text(submissions.payload) AS kv ' +
          'WHERE intake_search_fold(kv.value) ILIKE intake_search_pattern(?))',
        [f.q],
      );
  }
  return query;
}

/** The list's order by received time: `desc` newest first (the default), `asc` oldest first. */
export type Order = 'asc' | 'desc';

/** Which rows of the filter, in what order: from `after` (strictly, unless `inclusive`), `limit` at most. */
interface Slice {
  order?: Order;
  after?: Position;
  inclusive?: boolean;
  limit?: number;
}

/**
 * The filter's rows in the slice's order, as a query whose rows are `submissions` rows. A search with terms
 * (migration 016) walks the form's 30-day buckets in that order, each through the search index and sorted, and stops
 * once it has `limit` rows: a page reads about a page of matches however large the form. Postgres returns a lateral
 * join's rows in the order of its outer rows, the buckets; each bucket's rows are sorted within it, so the stream is
 * in order without a sort over every match.
 */
async function matching(db: Queryable, f: SubmissionFilter, slice: Slice): Promise<{ rows: Knex.QueryBuilder }> {
  const order = slice.order ?? 'desc';
  const sliced = (query: Knex.QueryBuilder) => {
    if (slice.after) {
      const op = (order === 'desc' ? '<' : '>') + (slice.inclusive ? '=' : '');
      query.whereRaw(`(submissions.received_at, submissions.id) ${op} (?, ?)`, [
        slice.after.receivedAt,
        slice.after.id,
      ]);
    }
    query.orderBy([
      { column: 'submissions.received_at', order },
      { column: 'submissions.id', order },
    ]);
    if (slice.limit !== undefined) query.limit(slice.limit);
    return query;
  };
  const terms = f.q ? await searchTerms(db, f.q) : [];
  // Wrapped: a query builder is a thenable, which an async function would run rather than return.
  if (terms.length === 0) return { rows: sliced(filtered(db, f)) };
  const inBucket = sliced(
    filtered(db, f, true, db.raw('intake_search_candidates(?, b.bucket, ?) AS submissions', [f.formId, terms])).select(
      'submissions.*',
    ),
  );
  const stream = db
    .from(bucketsOf(db, f, order, slice.after))
    .crossJoin(db.raw('LATERAL (?) AS submissions', [inBucket]));
  if (slice.limit !== undefined) stream.limit(slice.limit);
  return { rows: stream };
}

/** The search terms of `q` (migration 016): none when it has no three letters or digits in a row. */
async function searchTerms(db: Queryable, q: string): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { terms: string[] }[] }>('SELECT intake_search_terms(?) AS terms', [q]);
  return rows[0]!.terms;
}

/**
 * The form's buckets that may hold the slice's rows, in its order: from the newest or the oldest row, within `since`
 * and `until`, from the cursor on.
 */
function bucketsOf(db: Queryable, f: SubmissionFilter, order: Order, after?: Position): Knex.Raw {
  const edge = (fn: 'min' | 'max') =>
    `intake_search_bucket((SELECT ${fn}(received_at) FROM submissions WHERE form_id = :form))`;
  const at = (name: string) => `intake_search_bucket(CAST(:${name} AS timestamptz))`;
  const [start, end, step] =
    order === 'desc'
      ? [`least(${edge('max')}, ${at('until')}, ${at('after')})`, `greatest(${edge('min')}, ${at('since')})`, -1]
      : [`greatest(${edge('min')}, ${at('since')}, ${at('after')})`, `least(${edge('max')}, ${at('until')})`, 1];
  return db.raw(`(SELECT n AS bucket FROM generate_series(${start}, ${end}, ${step}) AS n) AS b`, {
    form: f.formId,
    since: f.since ?? null,
    until: f.until ?? null,
    after: after?.receivedAt ?? null,
  });
}

/**
 * One page in `order` (newest first unless `asc`), strictly after `after` in that order when given (or at or after
 * it, with `inclusive`).
 */
export async function listSubmissionsPage(
  db: Queryable,
  f: SubmissionFilter & { after?: Position; limit: number; order?: Order; inclusive?: boolean },
): Promise<SubmissionRow[]> {
  return (await matching(db, f, f)).rows.select(COLUMNS.map((c) => `submissions.${c}`));
}

/** The ids of every submission the filter matches, newest first. */
export async function findSubmissionIds(db: Queryable, f: SubmissionFilter): Promise<string[]> {
  return (await matching(db, f, {})).rows.pluck('submissions.id');
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
    .whereNull('deleted_at')
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
  const firstAppearances = (await matching(db, f, {})).rows
    .clearOrder()
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

/** The account's submissions outside the trash: not deleted, and not of a form that is. */
function present(db: Queryable, accountId: string): Knex.QueryBuilder {
  return db('submissions')
    .where({ 'submissions.account_id': accountId })
    .whereNull('submissions.deleted_at')
    .whereNotExists(
      db('forms').whereRaw('forms.id = submissions.form_id').whereNotNull('forms.deleted_at').select(db.raw('1')),
    );
}

export async function findSubmission(
  db: Queryable,
  accountId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<SubmissionRow | undefined> {
  const query = present(db, accountId).where({ 'submissions.id': id });
  if (options.forUpdate) query.forUpdate('submissions');
  return query.first(COLUMNS.map((c) => `submissions.${c}`));
}

export async function submissionExists(db: Queryable, accountId: string, id: string): Promise<boolean> {
  return Boolean(await present(db, accountId).where({ 'submissions.id': id }).first('submissions.id'));
}

/** Moves the submission to the trash (files and all, as they are); false when it is not there to move. */
export async function trashSubmissionRow(db: Queryable, accountId: string, id: string, at: Date): Promise<boolean> {
  return (
    (await db('submissions').where({ account_id: accountId, id }).whereNull('deleted_at').update({ deleted_at: at })) >
    0
  );
}

/**
 * Takes these of the account's submissions out of the trash, those that went there after `trashedSince` (older ones
 * are deleted for good, if not yet purged); returns those it did.
 */
export async function restoreSubmissionRows(
  db: Queryable,
  accountId: string,
  ids: string[],
  trashedSince: Date,
): Promise<string[]> {
  return db('submissions')
    .where({ account_id: accountId })
    .whereIn('id', ids)
    .where('deleted_at', '>', trashedSince)
    .update({ deleted_at: null })
    .returning('id')
    .then((rows: { id: string }[]) => rows.map((r) => r.id));
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

/** A stored file by id alone (the signed link is its authorisation), unless its submission or form is in the trash. */
export async function findFileById(db: Queryable, id: string): Promise<FileRow | undefined> {
  return db('submission_files as f')
    .join('submissions as s', 's.id', 'f.submission_id')
    .join('forms as fo', 'fo.id', 's.form_id')
    .where({ 'f.id': id })
    .whereNull('s.deleted_at')
    .whereNull('fo.deleted_at')
    .first('f.*');
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
    .from((await matching(db, f, { limit: exactUpTo + 1 })).rows.clearOrder().select(db.raw('1')).as('capped'))
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

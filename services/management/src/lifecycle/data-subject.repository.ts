import type { Knex } from 'knex';
import type { Queryable } from '@intake/shared/base';
import type { ProjectColumns, SubmissionStatus } from '@intake/shared/contracts';
import type { FileRow } from '../submissions/submission.repository';

export interface SubjectSubmission {
  id: string;
  form_id: string;
  received_at: Date;
  status: SubmissionStatus;
}

/**
 * The account's submissions with a field whose value is `email` (already trimmed and lower-cased), newest first, up
 * to `limit`, strictly after `after` when given. Found through the search table's e-mail index (migration 024) and,
 * for submissions the indexer has not reached yet, by testing each form's backlog (`intake_search_waiting`) with the
 * same function the indexer stores (`intake_subject_emails`, migration 018, over the payload and the `_replyto`
 * direction, 028): a lookup, an export or an erasure misses nothing posted a moment before it.
 */
/** Whose data: an address in an account, within some of its projects (null: all of them). */
export interface SubjectScope {
  accountId: string;
  email: string;
  projects: string[] | null;
}

function byEmail(db: Queryable, props: SubjectScope): Knex.QueryBuilder {
  const indexed = db('submission_search')
    .whereRaw('emails @> ARRAY[?]::text[]', [props.email])
    .andWhere('account_id', props.accountId)
    .select('submission_id');
  const waiting = db('forms as f')
    .crossJoin(db.raw('intake_search_waiting(f.id) AS b(id)'))
    .join('submissions as w', 'w.id', 'b.id')
    .where('f.account_id', props.accountId)
    .whereRaw(
      `(intake_subject_emails(w.payload) || coalesce(intake_subject_emails(w.directions::json), '{}'))
       @> ARRAY[?]::text[]`,
      [props.email],
    )
    .select('b.id');
  const found = db('submissions').whereIn('id', indexed.unionAll(waiting)).andWhere('account_id', props.accountId);
  if (props.projects === null) return found;
  const forms = db('forms').where('account_id', props.accountId).whereIn('project_id', props.projects).select('id');
  return found.whereIn('form_id', forms);
}

export async function findSubjectSubmissions(db: Queryable, props: SubjectScope): Promise<SubjectSubmission[]> {
  return byEmail(db, props)
    .orderBy([
      { column: 'received_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .select('id', 'form_id', 'received_at', 'status');
}

/** A submission as the export writes it: the payload as stored text (posted order kept, never re-parsed). */
export interface SubjectSubmissionText extends SubjectSubmission {
  payload_text: string;
  /** The control fields' directions (`_subject`, `_replyto`), when the post had any. */
  directions: Record<string, string> | null;
}

/** One batch of the export, newest first, after `after`. */
export async function pageOfSubjectSubmissions(
  db: Queryable,
  props: SubjectScope & { limit: number; after?: { receivedAt: Date; id: string } },
): Promise<SubjectSubmissionText[]> {
  const query = byEmail(db, props);
  if (props.after) query.whereRaw('(received_at, id) < (?, ?)', [props.after.receivedAt, props.after.id]);
  return query
    .orderBy([
      { column: 'received_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(props.limit)
    .select('id', 'form_id', 'received_at', 'status', 'directions', db.raw('payload::text AS payload_text'));
}

/** The files of the given submissions. */
export async function findFilesOf(db: Queryable, submissionIds: string[]): Promise<FileRow[]> {
  if (submissionIds.length === 0) return [];
  return db('submission_files').whereIn('submission_id', submissionIds).orderBy('id');
}

/** The field names of the person's submissions, each once, in the order they first appear (oldest submission first). */
export async function findSubjectFieldNames(db: Queryable, props: SubjectScope): Promise<string[]> {
  const subject = byEmail(db, props).select('received_at', 'payload').as('s');
  return db
    .from(subject)
    .crossJoin(db.raw('json_object_keys(s.payload) WITH ORDINALITY AS k(key, n)'))
    .groupBy('k.key')
    .orderByRaw('min(s.received_at), min(k.n)')
    .pluck('k.key');
}

/** The forms `ids` of the account (those in the trash too), with their names and their projects' columns. */
export async function findFormsNamed(
  db: Queryable,
  accountId: string,
  ids: string[],
): Promise<({ id: string; name: string } & ProjectColumns)[]> {
  if (ids.length === 0) return [];
  return db('forms as f')
    .leftJoin('projects as p', 'p.id', 'f.project_id')
    .where('f.account_id', accountId)
    .whereIn('f.id', [...new Set(ids)])
    .select('f.id', 'f.name', 'p.id as project_id', 'p.name as project_name', 'p.is_default as project_is_default');
}

import type { Queryable } from '@intake/shared/base';
import type { ProjectColumns } from '@intake/shared/contracts';
import { COLUMNS, type SubmissionRow } from './submission.repository';

/** A submission in the trash, with its form and the form's project named. */
export interface TrashedSubmissionRow extends SubmissionRow, ProjectColumns {
  form_name: string;
  deleted_at: Date;
}

const TRASHED_COLUMNS = [...COLUMNS, 'deleted_at'].map((c) => `s.${c}`);

/**
 * A page of the account's submission trash, most recently deleted first: the submissions deleted after
 * `trashedSince` (older ones are deleted for good, whether or not the purge has reached them), of forms that are not
 * in the trash themselves (those come back with their form, from the forms' trash). `forms` narrows it to one form,
 * `projects` to the forms of these projects (null: all). Read through the trash's partial index (migration 030).
 */
export async function pageOfTrashedSubmissions(
  db: Queryable,
  props: {
    accountId: string;
    trashedSince: Date;
    formId?: string;
    projects: string[] | null;
    after?: { at: Date; id: string };
    limit: number;
  },
): Promise<TrashedSubmissionRow[]> {
  const query = db('submissions as s')
    .join('forms as f', 'f.id', 's.form_id')
    .leftJoin('projects as p', 'p.id', 'f.project_id')
    .where({ 's.account_id': props.accountId })
    .where('s.deleted_at', '>', props.trashedSince)
    .whereNull('f.deleted_at');
  if (props.formId) query.where('s.form_id', props.formId);
  if (props.projects) query.whereIn('f.project_id', props.projects);
  if (props.after) query.whereRaw('(s.deleted_at, s.id) < (?, ?)', [props.after.at, props.after.id]);
  return query
    .orderBy([
      { column: 's.deleted_at', order: 'desc' },
      { column: 's.id', order: 'desc' },
    ])
    .limit(props.limit)
    .select([
      ...TRASHED_COLUMNS,
      'f.name as form_name',
      'f.project_id as project_id',
      'p.name as project_name',
      'p.is_default as project_is_default',
    ]);
}

/**
 * Locks one of the account's submissions, in the trash or not, for deleting it for good: its form, or undefined when
 * the account has no such submission or its form is in the trash (it goes with its form).
 */
export async function lockSubmissionForGood(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<{ form_id: string } | undefined> {
  return db('submissions as s')
    .join('forms as f', 'f.id', 's.form_id')
    .where({ 's.account_id': accountId, 's.id': id })
    .whereNull('f.deleted_at')
    .forUpdate('s')
    .first('s.form_id');
}

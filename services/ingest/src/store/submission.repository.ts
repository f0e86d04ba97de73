import type { Queryable } from '@intake/shared/base';
import type { SubmissionStatus } from '@intake/shared/contracts';

export interface Replay {
  submission_id: string;
  status: SubmissionStatus;
}

/** The submission an unexpired idempotency key of the form points to. */
export async function findReplay(
  db: Queryable,
  props: { formId: string; key: string; now: Date },
): Promise<Replay | undefined> {
  return db('idempotency_keys as k')
    .join('submissions as s', 's.id', 'k.submission_id')
    .where({ 'k.form_id': props.formId, 'k.key': props.key })
    .andWhere('k.expires_at', '>', props.now)
    .first('k.submission_id', 's.status');
}

/** Which of these submissions exist. */
export async function findStoredSubmissionIds(db: Queryable, ids: string[]): Promise<Set<string>> {
  return new Set<string>(ids.length ? await db('submissions').whereIn('id', ids).pluck('id') : []);
}

/** Which of these Postgres server processes are still running. */
export async function findRunningBackendPids(db: Queryable, pids: number[]): Promise<Set<number>> {
  return new Set<number>(pids.length ? await db('pg_stat_activity').whereIn('pid', pids).pluck('pid') : []);
}

import type { Queryable } from '@intake/shared';

/** When the newest `limit` failures against `subject` since `since` happened, newest first. */
export async function recentSignInFailures(
  db: Queryable,
  props: { subject: string; since: Date; limit: number },
): Promise<Date[]> {
  const rows: { at: Date }[] = await db('sign_in_failures')
    .where('subject', props.subject)
    .where('at', '>', props.since)
    .orderBy('at', 'desc')
    .limit(props.limit)
    .select('at');
  return rows.map((r) => r.at);
}

/** Counts a failure against each subject, and forgets failures older than `forgetBefore` (no limit looks that far). */
export async function addSignInFailures(
  db: Queryable,
  props: { subjects: string[]; at: Date; forgetBefore: Date },
): Promise<void> {
  await db('sign_in_failures').insert(props.subjects.map((subject) => ({ subject, at: props.at })));
  await db('sign_in_failures').where('at', '<', props.forgetBefore).delete();
}

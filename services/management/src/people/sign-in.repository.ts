import type { Queryable } from '@intake/shared/base';

/** A subject failures count against, with how many its window allows. */
export interface FailureSubject {
  subject: string;
  limit: number;
  since: Date;
}

/** What taking a failure slot found: the rows taken (one per subject), or the first subject already full. */
export type SlotTaken = { taken: true; ids: string[] } | { taken: false; subject: string; oldest: Date };

/**
 * Takes a failure slot against every subject before the work it guards (a password's verification), so that
 * concurrent attempts cannot all pass a count none of them has added to yet. In one transaction, under an advisory
 * lock per subject (taken in one order, so two takers never wait on each other crosswise): each subject's newest
 * `limit` failures since `since` are read and, when every subject has room, a row is added for each. The rows stand
 * for a failure until `releaseSignInSlot` removes them (the attempt succeeded). A full subject answers with the
 * oldest of its counted failures (when a slot comes free).
 */
export async function takeSignInSlot(
  db: Queryable,
  props: { subjects: FailureSubject[]; at: Date; forgetBefore: Date },
): Promise<SlotTaken> {
  const taken = await db.transaction(async (trx): Promise<SlotTaken> => {
    for (const subject of [...new Set(props.subjects.map((s) => s.subject))].sort())
      await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`sign-in-failures:${subject}`]);
    for (const { subject, limit, since } of props.subjects) {
      const rows: { at: Date }[] = await trx('sign_in_failures')
        .where('subject', subject)
        .where('at', '>', since)
        .orderBy('at', 'desc')
        .limit(limit)
        .select('at');
      if (rows.length >= limit) return { taken: false, subject, oldest: (rows[rows.length - 1] as { at: Date }).at };
    }
    const ids: { id: string }[] = await trx('sign_in_failures')
      .insert(props.subjects.map(({ subject }) => ({ subject, at: props.at })))
      .returning('id');
    return { taken: true, ids: ids.map((r) => String(r.id)) };
  });
  // The table only needs the longest window: older rows go as new ones come.
  if (taken.taken) await db('sign_in_failures').where('at', '<', props.forgetBefore).delete();
  return taken;
}

/** Gives back a slot: the attempt it guarded succeeded, and is no failure. */
export async function releaseSignInSlot(db: Queryable, ids: string[]): Promise<void> {
  if (ids.length > 0) await db('sign_in_failures').whereIn('id', ids).delete();
}

import type { Db } from '@intake/shared/base';

/**
 * One batch of what the retention sweep deletes from each table (each found through an index on its age: migration
 * 023 for processed_events), so a sweep reads what it deletes, not the table.
 */
export const sweepVictims = {
  idempotencyKeys: (db: Db, props: { now: Date; batch: number }) =>
    db('idempotency_keys').where('expires_at', '<=', props.now).select(db.raw('ctid')).limit(props.batch),
  processedEvents: (db: Db, props: { before: Date; batch: number }) =>
    db('processed_events').where('processed_at', '<', props.before).select(db.raw('ctid')).limit(props.batch),
};

/** Deletes one batch of `table`'s rows that `victims` selects (by ctid); how many. */
export async function deleteSweepBatch(db: Db, table: string, victims: ReturnType<Db>): Promise<number> {
  return db(table)
    .whereIn(db.raw('ctid') as unknown as string, victims)
    .delete();
}

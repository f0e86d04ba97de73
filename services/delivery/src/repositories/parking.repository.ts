import type { Db, Queryable } from '@intake/shared';

/** Parks a delivery until `dueAt` (migration 025); parking it again moves its time. */
export async function parkDelivery(db: Queryable, deliveryId: string, dueAt: Date): Promise<void> {
  await db.raw(
    `INSERT INTO delivery_parking (delivery_id, due_at) VALUES (?, ?)
     ON CONFLICT (delivery_id) DO UPDATE SET due_at = excluded.due_at`,
    [deliveryId, dueAt],
  );
}

/** A parked delivery that is due: `due_at` names its request (a request sent again for the same time is deduplicated). */
export interface DueDelivery {
  id: string;
  dueAt: Date;
}

/**
 * Takes up to `limit` parked deliveries due by `now`, in one transaction: those still retrying are handed to `send`
 * (which publishes their requests) and then kept parked `recheckMs` longer, in case a request is lost (the attempt,
 * when it comes, parks its delivery again at its next step or ends it); those no longer retrying (succeeded by a
 * replay, failed, disabled) are unparked. Rows another process holds are skipped. Returns how many were sent.
 */
export async function takeDueParked(
  db: Db,
  props: { now: Date; limit: number; recheckMs: number },
  send: (due: DueDelivery[]) => Promise<void>,
): Promise<number> {
  return db.transaction(async (trx) => {
    const { rows } = await trx.raw<{ rows: { id: string; due_at: Date; status: string }[] }>(
      `SELECT p.delivery_id AS id, p.due_at, d.status FROM delivery_parking p JOIN deliveries d ON d.id = p.delivery_id
       WHERE p.due_at <= ? ORDER BY p.due_at LIMIT ? FOR UPDATE OF p SKIP LOCKED`,
      [props.now, props.limit],
    );
    const due = rows.filter((r) => r.status === 'retrying');
    const settled = rows.filter((r) => r.status !== 'retrying').map((r) => r.id);
    if (settled.length > 0) await trx('delivery_parking').whereIn('delivery_id', settled).delete();
    if (due.length === 0) return 0;
    await send(due.map((r) => ({ id: r.id, dueAt: r.due_at })));
    await trx('delivery_parking')
      .whereIn(
        'delivery_id',
        due.map((r) => r.id),
      )
      .update({ due_at: new Date(props.now.getTime() + props.recheckMs) });
    return due.length;
  });
}

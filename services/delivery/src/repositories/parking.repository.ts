import type { Db, Queryable } from '@intake/shared/base';

/**
 * Parks deliveries until their `dueAt` (migration 025), in one statement; parking one again moves its time. A
 * delivery deleted meanwhile (its submission erased, its webhook deleted) is skipped.
 */
export async function parkDeliveries(db: Queryable, parked: { id: string; dueAt: Date }[]): Promise<void> {
  if (parked.length === 0) return;
  await db.raw(
    `INSERT INTO delivery_parking (delivery_id, due_at)
     SELECT d.id, p.due_at FROM unnest(?::text[], ?::timestamptz[]) AS p (id, due_at) JOIN deliveries d ON d.id = p.id
     ORDER BY d.id
     ON CONFLICT (delivery_id) DO UPDATE SET due_at = excluded.due_at`,
    [parked.map((p) => p.id), parked.map((p) => p.dueAt)],
  );
}

/** A parked delivery that is due: `due_at` names its request (a request sent again for the same time is deduplicated). */
export interface DueDelivery {
  id: string;
  dueAt: Date;
  webhookId: string;
  accountId: string;
}

/**
 * Takes up to `limit` parked deliveries due by `now`, in one transaction: those still waiting (retrying, or pending
 * when the reconciler parked them) are handed to `send`
 * (which publishes their requests) and then kept parked `recheckMs` longer, in case a request is lost (the attempt,
 * when it comes, parks its delivery again at its next step or ends it); those no longer retrying (succeeded by a
 * replay, failed, disabled) are unparked. Rows another process holds are skipped. Returns how many were sent.
 */
export async function takeDueParked(
  db: Db,
  props: { now: Date; limit: number; recheckMs: number },
  send: (due: DueDelivery[]) => Promise<void>,
  /** Deliveries not to ask for now, and until when they stay parked (a broken webhook's, but for its probe). */
  holdBack: (due: DueDelivery[]) => Map<string, Date> = () => new Map(),
): Promise<number> {
  return db.transaction(async (trx) => {
    const { rows } = await trx.raw<{
      rows: { id: string; due_at: Date; status: string; webhook_id: string; account_id: string }[];
    }>(
      `SELECT p.delivery_id AS id, p.due_at, d.status, d.webhook_id, d.account_id
       FROM delivery_parking p JOIN deliveries d ON d.id = p.delivery_id
       WHERE p.due_at <= ? ORDER BY p.due_at LIMIT ? FOR UPDATE OF p SKIP LOCKED`,
      [props.now, props.limit],
    );
    const waiting = (r: { status: string }): boolean => r.status === 'pending' || r.status === 'retrying';
    const settled = rows.filter((r) => !waiting(r)).map((r) => r.id);
    if (settled.length > 0) await trx('delivery_parking').whereIn('delivery_id', settled).delete();
    const candidates = rows
      .filter(waiting)
      .map((r) => ({ id: r.id, dueAt: r.due_at, webhookId: r.webhook_id, accountId: r.account_id }));
    const held = holdBack(candidates);
    await parkDeliveries(
      trx,
      [...held].map(([id, dueAt]) => ({ id, dueAt })),
    );
    const due = candidates.filter((d) => !held.has(d.id));
    if (due.length === 0) return 0;
    await send(due);
    await trx('delivery_parking')
      .whereIn(
        'delivery_id',
        due.map((r) => r.id),
      )
      .update({ due_at: new Date(props.now.getTime() + props.recheckMs) });
    return due.length;
  });
}

/** One step of the reconciler's walk (see watchWaitingDeliveries). */
export interface ReconcileStep {
  /** Deliveries walked past. */
  walked: number;
  /** Of those, still waiting and not parked: parked now. */
  parked: number;
}

/**
 * One step of the reconciler's walk over `deliveries` (migration 026), in one transaction: the next `limit` deliveries
 * after its cursor whose ids sort below `before` (made before then, by the primary key's index); each still waiting
 * (`pending` or `retrying`) and not parked is parked due at its next attempt (at once when that has passed), so the
 * parking pump asks for it and keeps asking until it ends; a test ping left pending is marked failed. Answers
 * undefined when another process is walking.
 */
export async function watchWaitingDeliveries(
  db: Db,
  props: { before: string; limit: number },
): Promise<ReconcileStep | undefined> {
  return db.transaction(async (trx) => {
    await trx.raw(
      `INSERT INTO reconciler_cursors (name, position) VALUES ('deliveries', '') ON CONFLICT (name) DO NOTHING`,
    );
    const { rows: cursor } = await trx.raw<{ rows: { position: string }[] }>(
      `SELECT position FROM reconciler_cursors WHERE name = 'deliveries' FOR UPDATE SKIP LOCKED`,
    );
    if (cursor.length === 0) return undefined;
    const { rows } = await trx.raw<{ rows: { last: string | null; walked: number; parked: number }[] }>(
      `WITH walked AS (
         SELECT id, status, next_attempt_at, event_type FROM deliveries WHERE id > ? AND id < ? ORDER BY id LIMIT ?),
       parked AS (
         INSERT INTO delivery_parking (delivery_id, due_at)
         SELECT id, greatest(coalesce(next_attempt_at, now()), now()) FROM walked
         WHERE status IN ('pending', 'retrying') AND event_type <> 'webhook.test'
         ON CONFLICT (delivery_id) DO NOTHING
         RETURNING 1),
       -- A test ping is made once, now, or never: one whose process stopped before recording it is not sent later.
       pings AS (
         UPDATE deliveries d SET status = 'failed', updated_at = now(),
           last_error = 'the delivery process making this test ping stopped before it was recorded'
         FROM walked w WHERE d.id = w.id AND w.event_type = 'webhook.test' AND w.status = 'pending'
         RETURNING 1)
       SELECT (SELECT max(id) FROM walked) AS last, (SELECT count(*)::int FROM walked) AS walked,
         (SELECT count(*)::int FROM parked) AS parked, (SELECT count(*)::int FROM pings) AS pings`,
      [cursor[0]!.position, props.before, props.limit],
    );
    const step = rows[0]!;
    if (step.last !== null)
      await trx.raw(`UPDATE reconciler_cursors SET position = ?, updated_at = now() WHERE name = 'deliveries'`, [
        step.last,
      ]);
    return { walked: step.walked, parked: step.parked };
  });
}

import { runPrepared, type Db } from '@intake/shared/base';
import type { DeliveryTarget } from './delivery.repository';

/*
 * The send consumer's own statements (see DeliveryStore in deliver.ts): the deliveries of a
 * batch of requests read and their leases taken in one statement, a lease given back. The attempts
 * are recorded by recordDeliveryAttempts (record.repository.ts; the test ping's too).
 */

/** Whether this process now holds the delivery's lease; when not, how long the holder's lease still runs. */
export type Lease = { taken: true } | { taken: false; remainingMs: number };

/** What claiming a delivery for an attempt found: the delivery with its webhook (none when deleted), and the lease. */
export interface DeliveryClaim {
  target: DeliveryTarget | undefined;
  lease: Lease;
}

/** A claim's ask: the delivery, what triggered the attempt, how long the attempt holds it. */
export interface ClaimAsk {
  id: string;
  trigger: 'schedule' | 'replay';
  leaseMs: number;
}

/**
 * The statement of `claimDeliveries`: reads each delivery with what sending needs of its webhook,
 * and in the same statement takes its lease when an attempt may be made: the webhook is enabled,
 * nobody holds the lease, and (for the schedule) the delivery still waits with attempts left.
 * Otherwise the caller's rules decide without a lease (a delivery done, failed or disabled).
 *
 * Its commit does not wait for the WAL flush (`set_config(..., true)`: for this statement's own
 * transaction; the connection keeps its setting). Every other session sees the lease at once; only
 * a Postgres crash can lose it, and a crash already makes the attempt in flight again, since its
 * record fails. The attempt's record, which does wait, flushes the lease with it. So a webhook's
 * way has one flush less.
 */
export const CLAIM_DELIVERIES = {
  name: 'delivery_claim',
  // The columns are named: a prepared statement's result may not change shape when a migration
  // adds a column (Postgres would fail every call on the connections that prepared it).
  text: `WITH ask AS (SELECT * FROM unnest($1::text[], $2::text[], $3::float8[]) AS a(id, trigger, lease_ms)
       WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL),
     cur AS MATERIALIZED (
       SELECT d.id, d.account_id, d.webhook_id, d.form_id, d.submission_id, d.event_type, d.data, d.status,
         d.attempt_count, d.last_error, d.last_status_code, d.next_attempt_at, d.created_at, d.updated_at,
         d.lease_until, w.url, w.enabled, w.secret AS sealed_secret, w.format, w.destination, w.credential AS sealed_credential,
         f.name AS form_name, ask.trigger, ask.lease_ms,
         (SELECT count(*)::int FROM delivery_attempts a WHERE a.delivery_id = d.id AND a.trigger = 'schedule') AS scheduled_attempts
       FROM ask JOIN deliveries d ON d.id = ask.id JOIN webhooks w ON w.id = d.webhook_id JOIN forms f ON f.id = d.form_id),
     taken AS (
       UPDATE deliveries d SET lease_until = now() + make_interval(secs => cur.lease_ms / 1000)
       FROM cur
       WHERE d.id = cur.id AND cur.enabled AND d.attempt_count = cur.attempt_count
         AND (d.lease_until IS NULL OR d.lease_until <= now())
         AND (cur.trigger = 'replay' OR (d.status IN ('pending', 'retrying') AND cur.scheduled_attempts < $4))
       RETURNING d.id)
     SELECT cur.id, cur.account_id, cur.webhook_id, cur.form_id, cur.submission_id, cur.event_type, cur.data,
       cur.status, cur.attempt_count, cur.last_error, cur.last_status_code, cur.next_attempt_at, cur.created_at,
       cur.updated_at, cur.url, cur.enabled, cur.sealed_secret, cur.format, cur.destination, cur.sealed_credential,
       cur.form_name, cur.scheduled_attempts,
       EXISTS (SELECT 1 FROM taken t WHERE t.id = cur.id) AS taken,
       -- Capped at one whole lease: the holder's may have started a moment after this statement did.
       least(ceil(cur.lease_ms), ceil(greatest(0, extract(epoch FROM cur.lease_until - now()) * 1000)))::int AS remaining_ms
     FROM cur`,
};

/**
 * Claims deliveries for their attempts, one statement for all (CLAIM_DELIVERIES). A lease is taken
 * only while the row is as read (no attempt recorded meanwhile) and nobody holds it: a copy of a
 * message handled while another process makes the attempt gets the time the holder's lease still
 * runs. A delivery asked for twice in one call is leased at most once (the later asks are refused
 * as if another process held it). `maxAttempts`: no lease for a scheduled attempt past it.
 * Answers in the order asked.
 */
export async function claimDeliveries(db: Db, asks: ClaimAsk[], maxAttempts: number): Promise<DeliveryClaim[]> {
  const first = new Map<string, number>();
  asks.forEach((a, i) => first.has(a.id) || first.set(a.id, i));
  const unique = [...first.values()].map((i) => asks[i]!);
  const rows = await runPrepared<DeliveryTarget & { taken: boolean; remaining_ms: number | null }>(db, {
    ...CLAIM_DELIVERIES,
    values: [unique.map((a) => a.id), unique.map((a) => a.trigger), unique.map((a) => a.leaseMs), maxAttempts],
  });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return asks.map((a, i): DeliveryClaim => {
    const row = byId.get(a.id);
    if (!row) return { target: undefined, lease: { taken: false, remainingMs: 0 } };
    const { taken, remaining_ms, ...target } = row;
    if (first.get(a.id) !== i) return { target, lease: { taken: false, remainingMs: a.leaseMs } };
    return { target, lease: taken ? { taken: true } : { taken: false, remainingMs: remaining_ms ?? 0 } };
  });
}

/** Gives back the lease of a delivery this process holds but will not attempt now (its redelivery came early). */
export async function releaseDeliveryLease(db: Db, id: string): Promise<void> {
  await runPrepared(db, {
    name: 'delivery_release',
    text: 'UPDATE deliveries SET lease_until = NULL WHERE id = $1',
    values: [id],
  });
}

/**
 * Extends the leases of deliveries whose attempts are still in flight, in one statement: each by `leaseMs` from now. A
 * lease already given back or ended by the attempt's record (`lease_until` NULL) stays ended.
 */
export async function extendDeliveryLeases(db: Db, ids: string[], leaseMs: number): Promise<void> {
  if (ids.length === 0) return;
  await runPrepared(db, {
    name: 'delivery_extend_leases',
    text: `UPDATE deliveries SET lease_until = now() + make_interval(secs => $2::float8 / 1000)
           WHERE id = ANY($1::text[]) AND lease_until IS NOT NULL`,
    values: [ids, leaseMs],
  });
}

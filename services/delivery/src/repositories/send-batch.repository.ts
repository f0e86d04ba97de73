import { runPrepared, type AttemptRecord, type Db } from '@intake/shared';
import type { DeliveryTarget } from './delivery.repository';
import type { Lease } from './lease.repository';

/*
 * The send consumer's three queries for many messages at once (see deliveryStore in
 * domain/deliver.ts): the targets read in one query, the leases taken in one statement, the
 * attempts recorded in one statement.
 */

export async function findDeliveryTargets(db: Db, ids: string[]): Promise<Map<string, DeliveryTarget>> {
  const rows = await runPrepared<DeliveryTarget>(db, {
    name: 'delivery_find_targets',
    // The columns are named: a prepared statement's result may not change shape when a migration
    // adds a column (Postgres would fail every call on the connections that prepared it).
    text: `SELECT d.id, d.account_id, d.webhook_id, d.form_id, d.submission_id, d.event_type, d.data, d.status,
       d.attempt_count, d.last_error, d.last_status_code, d.next_attempt_at, d.created_at, d.updated_at,
       w.url, w.enabled, w.secret AS sealed_secret,
       (SELECT count(*)::int FROM delivery_attempts a WHERE a.delivery_id = d.id AND a.trigger = 'schedule') AS scheduled_attempts
     FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ANY ($1::text[])`,
    values: [[...new Set(ids)]],
  });
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Takes the leases of several deliveries (see leaseDelivery). A delivery asked for twice in one
 * batch (two copies of its message handled at once) is leased at most once: the later asks are
 * refused as if another process held it.
 */
export async function leaseDeliveries(
  db: Db,
  asks: { id: string; attemptCount: number; leaseMs: number }[],
): Promise<Lease[]> {
  const first = new Map<string, number>();
  asks.forEach((a, i) => first.has(a.id) || first.set(a.id, i));
  const unique = [...first.values()].map((i) => asks[i]!);
  const rows = await runPrepared<{ id: string; taken: boolean; remaining_ms: number | null }>(db, {
    name: 'delivery_lease',
    text: `WITH ask AS (SELECT * FROM unnest($1::text[], $2::int[], $3::float8[]) AS a(id, attempt_count, lease_ms)),
     taken AS (
       UPDATE deliveries d SET lease_until = now() + make_interval(secs => ask.lease_ms / 1000)
       FROM ask WHERE d.id = ask.id AND d.attempt_count = ask.attempt_count AND (d.lease_until IS NULL OR d.lease_until <= now())
       RETURNING d.id)
     SELECT ask.id, EXISTS (SELECT 1 FROM taken t WHERE t.id = ask.id) AS taken,
       -- Capped at one whole lease: the holder's may have started a moment after this transaction did.
       (SELECT least(ceil(ask.lease_ms), ceil(greatest(0, extract(epoch FROM d.lease_until - now()) * 1000)))::int
        FROM deliveries d WHERE d.id = ask.id) AS remaining_ms
     FROM ask`,
    values: [unique.map((a) => a.id), unique.map((a) => a.attemptCount), unique.map((a) => a.leaseMs)],
  });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return asks.map((a, i) => {
    const row = byId.get(a.id);
    if (first.get(a.id) !== i) return { taken: false, remainingMs: a.leaseMs };
    return row?.taken ? { taken: true } : { taken: false, remainingMs: row?.remaining_ms ?? 0 };
  });
}

/** Records several attempts (of different deliveries) and their deliveries' new states in one statement; each ends its lease. */
export async function recordDeliveryAttempts(db: Db, records: AttemptRecord[]): Promise<void> {
  if (new Set(records.map((r) => r.deliveryId)).size !== records.length)
    throw new Error('one delivery twice in a batch of attempt records');
  const rows = records.map((r) => ({
    delivery_id: r.deliveryId,
    attempt: r.attempt,
    trigger: r.trigger,
    started_at: r.result.startedAt,
    duration_ms: r.result.durationMs,
    status_code: r.result.statusCode,
    error: r.result.error,
    response_body: r.result.responseBody,
    status: r.status,
    next_attempt_at: r.nextAttemptAt,
    updated_at: r.now,
  }));
  await runPrepared(db, {
    name: 'delivery_record_attempts',
    text: `WITH v AS MATERIALIZED (
       SELECT * FROM json_to_recordset($1::json) AS v(delivery_id text, attempt int, trigger text, started_at timestamptz,
         duration_ms int, status_code int, error text, response_body text, status text,
         next_attempt_at timestamptz, updated_at timestamptz)),
     attempts AS (
       INSERT INTO delivery_attempts (delivery_id, attempt, trigger, started_at, duration_ms, status_code, error, response_body)
       SELECT delivery_id, attempt, trigger, started_at, duration_ms, status_code, error, response_body FROM v)
     UPDATE deliveries d SET status = v.status, attempt_count = d.attempt_count + 1, last_error = v.error,
       last_status_code = v.status_code, next_attempt_at = v.next_attempt_at, lease_until = NULL, updated_at = v.updated_at
     FROM v WHERE d.id = v.delivery_id`,
    values: [JSON.stringify(rows)],
  });
}

import type { Queryable } from '@intake/shared';

/** Whether this process now holds the row's lease; when not, how long the holder's lease still runs. */
export type Lease = { taken: true } | { taken: false; remainingMs: number };

/**
 * Takes the lease on a delivery for one attempt. Not taken when another process holds it (its
 * attempt is in flight) or when an attempt was recorded since `attemptCount` was read.
 */
export async function leaseDelivery(
  db: Queryable,
  props: { id: string; attemptCount: number; leaseMs: number },
): Promise<Lease> {
  // Taken only while the row is as this process read it (no attempt recorded since) and nobody holds it.
  // The holder's lease may have started a moment after this transaction did (now() is each
  // transaction's start): what remains is capped at one whole lease.
  const { rows } = await db.raw<{ rows: { taken: boolean; remaining_ms: number | null }[] }>(
    `WITH taken AS (
       UPDATE deliveries SET lease_until = now() + make_interval(secs => ?::float8 / 1000)
       WHERE id = ? AND attempt_count = ? AND (lease_until IS NULL OR lease_until <= now())
       RETURNING id)
     SELECT EXISTS (SELECT 1 FROM taken) AS taken,
            (SELECT least(ceil(?::float8), ceil(greatest(0, extract(epoch FROM lease_until - now()) * 1000)))::int
             FROM deliveries WHERE id = ?) AS remaining_ms`,
    [props.leaseMs, props.id, props.attemptCount, props.leaseMs, props.id],
  );
  const row = rows[0];
  return row?.taken ? { taken: true } : { taken: false, remainingMs: row?.remaining_ms ?? 0 };
}

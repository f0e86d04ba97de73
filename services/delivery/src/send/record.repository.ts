import { runPrepared, type Db, type Queryable } from '@intake/shared/base';
import { type DeliveryRow, type DeliveryStatus } from '@intake/shared/webhooks';
import type { AttemptResult } from './attempt';

/*
 * The send path's record: each attempt with its delivery's new state (recordDeliveryAttempts), and a test ping's
 * delivery, inserted before its one attempt (insertDelivery). The row's shape, which management's log reads too, is
 * DeliveryRow in @intake/shared.
 */

export type DeliveryTrigger = 'schedule' | 'replay' | 'test';

/** Inserts one `pending` delivery (no attempt yet). */
export async function insertDelivery(
  db: Queryable,
  row: Pick<DeliveryRow, 'id' | 'account_id' | 'webhook_id' | 'form_id' | 'submission_id' | 'event_type' | 'data'> & {
    now: Date;
  },
): Promise<void> {
  const { now, data, ...rest } = row;
  await db('deliveries').insert({
    ...rest,
    data: JSON.stringify(data),
    status: 'pending',
    created_at: now,
    updated_at: now,
  });
}

/** One attempt of a delivery and the delivery's state after it. */
export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  trigger: DeliveryTrigger;
  result: AttemptResult;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  now: Date;
}

/**
 * The statement of `recordDeliveryAttempts`: inserts each attempt and sets its delivery's new state
 * (status, attempt count, last error and status code, next attempt), ending the attempt's lease
 * (`lease_until`, see the delivery worker), all in one statement, atomic and one round trip. It touches no
 * `webhooks` row: the delivery service tallies each webhook's health from the attempts it records and writes it
 * once a second (its `HealthTally`), so one webhook's failures never hold up another's records.
 */
export const RECORD_DELIVERY_ATTEMPTS = {
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
};

/**
 * Records attempts (each of a different delivery) and their deliveries' new states in one
 * statement (`RECORD_DELIVERY_ATTEMPTS`): the send path records many at once, the test ping one.
 */
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
  await runPrepared(db, { ...RECORD_DELIVERY_ATTEMPTS, values: [JSON.stringify(rows)] });
}

/**
 * Whether an attempt is recorded already (its delivery, number and start): a record whose commit went through while
 * its reply was lost with the connection (Postgres failing over, cut off) must not be written twice.
 */
export async function attemptRecorded(db: Db, record: AttemptRecord): Promise<boolean> {
  const row = await db('delivery_attempts')
    .where({ delivery_id: record.deliveryId, attempt: record.attempt, started_at: record.result.startedAt })
    .first('delivery_id');
  return row !== undefined;
}

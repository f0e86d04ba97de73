import type { Queryable } from '../base/db';
import type { AttemptResult, EventType } from './sender';

export type DeliveryStatus = 'pending' | 'retrying' | 'succeeded' | 'failed';
export type DeliveryTrigger = 'schedule' | 'replay' | 'test';

/** A row of `deliveries`: the delivery worker writes them, management reads them (the log) and the test ping writes one. */
export interface DeliveryRow {
  id: string;
  account_id: string;
  webhook_id: string;
  form_id: string;
  submission_id: string | null;
  event_type: EventType;
  data: Record<string, unknown>;
  status: DeliveryStatus;
  attempt_count: number;
  last_error: string | null;
  last_status_code: number | null;
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

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
 * Records one attempt and the delivery's new state in one statement (atomic on its own, one round
 * trip), and ends the attempt's lease (`lease_until`, see the delivery worker).
 */
export async function recordDeliveryAttempt(db: Queryable, props: AttemptRecord): Promise<void> {
  const { result } = props;
  await db.raw(
    `WITH attempt AS (
       INSERT INTO delivery_attempts (delivery_id, attempt, trigger, started_at, duration_ms, status_code, error, response_body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?))
     UPDATE deliveries SET status = ?, attempt_count = attempt_count + 1, last_error = ?, last_status_code = ?,
       next_attempt_at = ?, lease_until = NULL, updated_at = ?
     WHERE id = ?`,
    [
      props.deliveryId,
      props.attempt,
      props.trigger,
      result.startedAt,
      result.durationMs,
      result.statusCode,
      result.error,
      result.responseBody,
      props.status,
      result.error,
      result.statusCode,
      props.nextAttemptAt,
      props.now,
      props.deliveryId,
    ],
  );
}

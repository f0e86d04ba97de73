import type { Knex } from 'knex';
import type { DeliveryRow, Queryable } from '@intake/shared';

/** A delivery with what sending needs from its webhook. */
export interface DeliveryTarget extends DeliveryRow {
  url: string;
  enabled: boolean;
  sealed_secret: string;
  /** Attempts made by the schedule (replays and tests not counted): the next scheduled attempt is this + 1. */
  scheduled_attempts: number;
}

/*
 * Queries of the delivery worker. It runs on behalf of every account, so rows are addressed by
 * their ids (which carry the account). Recording an attempt is shared with the test ping
 * (recordDeliveryAttempt in @intake/shared).
 */

export async function findEnabledWebhooksOfForm(
  db: Queryable,
  accountId: string,
  formId: string,
): Promise<{ id: string }[]> {
  return db('webhooks').where({ account_id: accountId, form_id: formId, enabled: true }).orderBy('id').select('id');
}

/**
 * Creates the deliveries of one event; an existing one (a redelivered event) is left alone.
 * Returns the deliveries still waiting for their first attempt.
 */
export async function insertSubmissionDeliveries(
  db: Queryable,
  rows: Pick<DeliveryRow, 'id' | 'account_id' | 'webhook_id' | 'form_id' | 'submission_id' | 'data'>[],
): Promise<{ id: string }[]> {
  const first = rows[0];
  if (!first) return [];
  // A submission deleted (or relabelled spam) before its event arrived gets no deliveries: its data must not leave.
  const live = await db('submissions').where({ id: first.submission_id, status: 'received' }).first('id');
  if (!live) return [];
  const insert = db('deliveries')
    .insert(rows.map((r) => ({ ...r, data: JSON.stringify(r.data), event_type: 'submission.created' })))
    .toSQL();
  await db.raw(
    `${insert.sql} ON CONFLICT (webhook_id, submission_id) WHERE event_type = 'submission.created' DO NOTHING`,
    insert.bindings as Knex.RawBinding[],
  );
  return db('deliveries')
    .where({
      submission_id: first.submission_id,
      event_type: 'submission.created',
      status: 'pending',
      attempt_count: 0,
    })
    .whereIn(
      'webhook_id',
      rows.map((r) => r.webhook_id),
    )
    .select('id');
}

export async function findDeliveryTarget(db: Queryable, deliveryId: string): Promise<DeliveryTarget | undefined> {
  return db('deliveries as d')
    .join('webhooks as w', 'w.id', 'd.webhook_id')
    .where('d.id', deliveryId)
    .first(
      'd.*',
      'w.url',
      'w.enabled',
      'w.secret as sealed_secret',
      db.raw(
        `(SELECT count(*)::int FROM delivery_attempts a WHERE a.delivery_id = d.id AND a.trigger = 'schedule') AS scheduled_attempts`,
      ),
    );
}

export async function updateDeliveryStatus(
  db: Queryable,
  props: { deliveryId: string; status: DeliveryRow['status']; lastError: string | null; now: Date },
): Promise<void> {
  await db('deliveries')
    .where({ id: props.deliveryId })
    .update({ status: props.status, last_error: props.lastError, next_attempt_at: null, updated_at: props.now });
}

import type { Knex } from 'knex';
import type { AttemptResult, EventType } from '../domain/sender';

export type DeliveryStatus = 'pending' | 'retrying' | 'succeeded' | 'failed';
export type Trigger = 'schedule' | 'replay' | 'test';

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

/** A delivery with what sending needs from its webhook. */
export interface DeliveryTarget extends DeliveryRow {
  url: string;
  enabled: boolean;
  sealed_secret: string;
  /** Attempts made by the schedule (replays and tests not counted): the next scheduled attempt is this + 1. */
  scheduled_attempts: number;
}

/** Queries of the delivery worker. It runs on behalf of every account, so rows are addressed by their ids (which carry the account). */
export const deliveryRepository = {
  async enabledWebhooksOfForm(db: Knex, accountId: string, formId: string): Promise<{ id: string }[]> {
    return db('webhooks').where({ account_id: accountId, form_id: formId, enabled: true }).orderBy('id').select('id');
  },

  /** Creates the deliveries of one event; an existing one (a redelivered event) is left alone. Returns the deliveries still waiting for their first attempt. */
  async createForSubmission(
    db: Knex,
    rows: Omit<
      DeliveryRow,
      'status' | 'attempt_count' | 'last_error' | 'last_status_code' | 'next_attempt_at' | 'created_at' | 'updated_at'
    >[],
  ): Promise<{ id: string }[]> {
    if (rows.length === 0) return [];
    // A submission deleted (or relabelled spam) before its event arrived gets no deliveries: its data must not leave.
    const live = await db('submissions')
      .where({ id: (rows[0] as (typeof rows)[number]).submission_id, status: 'received' })
      .first('id');
    if (!live) return [];
    const insert = db('deliveries')
      .insert(rows.map((r) => ({ ...r, data: JSON.stringify(r.data), event_type: 'submission.created' })))
      .toSQL();
    await db.raw(
      `${insert.sql} ON CONFLICT (webhook_id, submission_id) WHERE event_type = 'submission.created' DO NOTHING`,
      insert.bindings as Knex.RawBinding[],
    );
    const first = rows[0] as (typeof rows)[number];
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
  },

  async target(db: Knex, deliveryId: string): Promise<DeliveryTarget | undefined> {
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
  },

  /** Records one attempt and the delivery's new state in one transaction, and ends the attempt's lease. */
  async recordAttempt(
    db: Knex,
    props: {
      deliveryId: string;
      attempt: number;
      trigger: Trigger;
      result: AttemptResult;
      status: DeliveryStatus;
      nextAttemptAt: Date | null;
      now: Date;
    },
  ): Promise<void> {
    const { result } = props;
    await db.transaction(async (trx) => {
      await trx('delivery_attempts').insert({
        delivery_id: props.deliveryId,
        attempt: props.attempt,
        trigger: props.trigger,
        started_at: result.startedAt,
        duration_ms: result.durationMs,
        status_code: result.statusCode,
        error: result.error,
        response_body: result.responseBody,
      });
      await trx('deliveries')
        .where({ id: props.deliveryId })
        .update({
          status: props.status,
          attempt_count: trx.raw('attempt_count + 1'),
          last_error: result.error,
          last_status_code: result.statusCode,
          next_attempt_at: props.nextAttemptAt,
          lease_until: null,
          updated_at: props.now,
        });
    });
  },

  async setStatus(
    db: Knex,
    deliveryId: string,
    status: DeliveryStatus,
    lastError: string | null,
    now: Date,
  ): Promise<void> {
    await db('deliveries')
      .where({ id: deliveryId })
      .update({ status, last_error: lastError, next_attempt_at: null, updated_at: now });
  },
};

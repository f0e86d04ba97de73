import type { DeliveryRow, Queryable } from '@intake/shared';

/** A delivery as the log shows it (its envelope data stays out of the log). */
export type DeliveryLogRow = Omit<DeliveryRow, 'account_id' | 'form_id' | 'data'>;

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  trigger: string;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
}

// The delivery log, always scoped by account.

export async function findLatestDeliveries(
  db: Queryable,
  accountId: string,
  webhookId: string,
  limit: number,
): Promise<DeliveryLogRow[]> {
  return db('deliveries')
    .where({ account_id: accountId, webhook_id: webhookId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit)
    .select(
      'id',
      'webhook_id',
      'submission_id',
      'event_type',
      'status',
      'attempt_count',
      'last_error',
      'last_status_code',
      'next_attempt_at',
      'created_at',
      'updated_at',
    );
}

export async function findAttemptsOfDeliveries(db: Queryable, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db('delivery_attempts')
    .whereIn('delivery_id', deliveryIds)
    .orderBy([
      { column: 'started_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ])
    .select('delivery_id', 'attempt', 'trigger', 'started_at', 'duration_ms', 'status_code', 'error', 'response_body');
}

export async function findDelivery(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<{ id: string; status: string; webhook_id: string } | undefined> {
  return db('deliveries').where({ account_id: accountId, id }).first('id', 'status', 'webhook_id');
}

export async function isWebhookEnabled(db: Queryable, accountId: string, webhookId: string): Promise<boolean> {
  const row = await db('webhooks').where({ account_id: accountId, id: webhookId }).first('enabled');
  return row?.enabled === true;
}

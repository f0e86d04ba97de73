import { NEWEST_FIRST, type Queryable } from '@intake/shared/base';
import { isChatFormat, shownChatUrl, type DeliveryRow, type WebhookFormat } from '@intake/shared/webhooks';

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

const LOG_COLUMNS = [
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
];

/** The webhook's latest deliveries, newest first; only those in `statuses` when given. */
export async function findLatestDeliveries(
  db: Queryable,
  accountId: string,
  webhookId: string,
  limit: number,
  statuses?: string[],
): Promise<DeliveryLogRow[]> {
  return db('deliveries')
    .where({ account_id: accountId, webhook_id: webhookId })
    .modify((q) => (statuses ? q.whereIn('status', statuses) : q))
    .orderBy(NEWEST_FIRST)
    .limit(limit)
    .select(LOG_COLUMNS);
}

/** Every delivery of one submission (one per webhook), newest first. */
export async function findDeliveriesOfSubmission(
  db: Queryable,
  accountId: string,
  submissionId: string,
): Promise<DeliveryLogRow[]> {
  return db('deliveries')
    .where({ account_id: accountId, submission_id: submissionId })
    .orderBy(NEWEST_FIRST)
    .select(LOG_COLUMNS);
}

/** Ids of the webhook's failed deliveries, oldest first. */
export async function findFailedDeliveryIds(
  db: Queryable,
  accountId: string,
  webhookId: string,
  limit: number,
): Promise<string[]> {
  const rows = await db('deliveries')
    .where({ account_id: accountId, webhook_id: webhookId, status: 'failed' })
    .orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ])
    .limit(limit)
    .select('id');
  return rows.map((r: { id: string }) => r.id);
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

/** The current URL of each of the account's webhooks in `ids`, by id. */
export async function findWebhookUrls(db: Queryable, accountId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows: { id: string; url: string; format: WebhookFormat; credential: string | null }[] = await db('webhooks')
    .where({ account_id: accountId })
    .whereIn('id', [...new Set(ids)])
    .select('id', 'url', 'format', 'credential');
  // A chat webhook's URL is its credential: only what may be shown of it.
  return new Map(rows.map((r) => [r.id, isChatFormat(r.format) && !r.credential ? shownChatUrl(r.url) : r.url]));
}

export async function isWebhookEnabled(db: Queryable, accountId: string, webhookId: string): Promise<boolean> {
  const row = await db('webhooks').where({ account_id: accountId, id: webhookId }).first('enabled');
  return row?.enabled === true;
}

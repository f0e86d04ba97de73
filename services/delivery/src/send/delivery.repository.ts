import type { Queryable } from '@intake/shared/base';
import type { ProjectColumns } from '@intake/shared/contracts';
import type { DeliveryRow, Destination, WebhookFormat } from '@intake/shared/webhooks';

/** A delivery with what sending needs from its webhook. */
export interface DeliveryTarget extends DeliveryRow {
  url: string;
  enabled: boolean;
  sealed_secret: string;
  /** What the webhook sends: the signed envelope, a chat message, or (an integration) a row, record or page. */
  format: WebhookFormat;
  /** An integration's destination; null for a webhook. */
  destination: Destination | null;
  /** An integration's credential, or a chat webhook's whole URL, sealed with SECRETS_KEY; null for a standard webhook. */
  sealed_credential: string | null;
  /** For a chat message's title. */
  form_name: string;
  /** Attempts made by the schedule (replays and tests not counted): the next scheduled attempt is this + 1. */
  scheduled_attempts: number;
}

/*
 * Queries of the delivery worker. It runs on behalf of every account, so rows are addressed by
 * their ids (which carry the account). The send path's own statements are in
 * claim.repository.ts; attempts are recorded by recordDeliveryAttempts in record.repository.ts.
 */

export async function updateDeliveryStatus(
  db: Queryable,
  props: { deliveryId: string; status: DeliveryRow['status']; lastError: string | null; now: Date },
): Promise<void> {
  await db('deliveries')
    .where({ id: props.deliveryId })
    .update({ status: props.status, last_error: props.lastError, next_attempt_at: null, updated_at: props.now });
}

/** One of the account's webhooks with its form's project, for a test ping; undefined when the account has none by that id. */
export async function findWebhookOfAccount(
  db: Queryable,
  accountId: string,
  webhookId: string,
): Promise<({ id: string; account_id: string; form_id: string } & ProjectColumns) | undefined> {
  return db('webhooks as w')
    .join('forms as f', 'f.id', 'w.form_id')
    .leftJoin('projects as p', 'p.id', 'f.project_id')
    .where({ 'w.id': webhookId, 'w.account_id': accountId })
    .first(
      'w.id',
      'w.account_id',
      'w.form_id',
      'p.id as project_id',
      'p.name as project_name',
      'p.is_default as project_is_default',
    );
}

import type { Knex } from 'knex';
import { type Queryable } from '@intake/shared/base';
import { newId } from '@intake/shared/contracts';
import { claimNotifications, type ClaimedNotification } from '@intake/shared/schema';

export const QUOTA_KINDS = ['quota-80', 'quota-100'] as const;

export type QuotaNotificationRow = ClaimedNotification<(typeof QUOTA_KINDS)[number]>;

// The quota-warning rows of the notifications table (other kinds belong to other services).

/**
 * Inserts a warning (`skipped` when a higher one supersedes it) unless one with the same dedup key exists; returns
 * the new id or undefined.
 */
export async function insertNotificationOnce(
  db: Queryable,
  row: {
    accountId: string;
    kind: QuotaNotificationRow['kind'];
    dedupKey: string;
    recipients: string[];
    status: 'pending' | 'skipped';
    now: Date;
  },
): Promise<string | undefined> {
  const inserted = await db('notifications')
    .insert({
      id: newId('notification', row.now.getTime()),
      account_id: row.accountId,
      kind: row.kind,
      dedup_key: row.dedupKey,
      recipients: JSON.stringify(row.recipients),
      status: row.status,
      created_at: row.now,
    })
    .onConflict('dedup_key')
    .ignore()
    .returning('id');
  return inserted[0]?.id;
}

/** Claims quota warnings to send (all, or only `ids`): shared's claimNotifications over the quota kinds. */
export function claimQuotaWarnings(
  trx: Knex.Transaction,
  options: { ids?: string[]; limit: number; now: Date; staleBefore: Date },
): Promise<QuotaNotificationRow[]> {
  return claimNotifications(trx, { kinds: QUOTA_KINDS, ...options });
}

/** Records a claimed warning as sent (only while it is still this sender's claim). */
export async function markNotificationSent(db: Queryable, id: string, now: Date): Promise<void> {
  await db('notifications').where({ id, status: 'sending' }).update({ status: 'sent', sent_at: now, last_error: null });
}

/** Records a refused send: back to `pending` for the next run, or `failed` after the last attempt. */
export async function markNotificationFailed(db: Queryable, id: string, error: string, giveUp: boolean): Promise<void> {
  await db('notifications')
    .where({ id, status: 'sending' })
    .update({ status: giveUp ? 'failed' : 'pending', last_error: error.slice(0, 1000) });
}

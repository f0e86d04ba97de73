import type { Knex } from 'knex';
import { newId, type Queryable } from '@intake/shared';

export const QUOTA_KINDS = ['quota-80', 'quota-100'] as const;

export interface QuotaNotificationRow {
  id: string;
  account_id: string;
  kind: (typeof QUOTA_KINDS)[number];
  dedup_key: string;
  recipients: string[];
  attempt_count: number;
}

// The quota-warning rows of the notifications table (other kinds belong to other services).

/** Inserts a warning (`skipped` when a higher one supersedes it) unless one with the same dedup key exists; returns the new id or undefined. */
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

/** Locks pending quota warnings (all, or only `ids`) so that one sender handles each. */
export async function lockPendingNotifications(
  trx: Knex.Transaction,
  options: { ids?: string[]; limit: number },
): Promise<QuotaNotificationRow[]> {
  const q = trx('notifications')
    .whereIn('kind', QUOTA_KINDS as unknown as string[])
    .andWhere('status', 'pending');
  if (options.ids) q.whereIn('id', options.ids);
  return q
    .orderBy('created_at')
    .limit(options.limit)
    .forUpdate()
    .skipLocked()
    .select('id', 'account_id', 'kind', 'dedup_key', 'recipients', 'attempt_count');
}

export async function markNotificationSent(db: Queryable, id: string, now: Date): Promise<void> {
  await db('notifications')
    .where({ id })
    .update({ status: 'sent', sent_at: now, attempt_count: db.raw('attempt_count + 1'), last_error: null });
}

export async function markNotificationFailed(db: Queryable, id: string, error: string, giveUp: boolean): Promise<void> {
  await db('notifications')
    .where({ id })
    .update({
      status: giveUp ? 'failed' : 'pending',
      attempt_count: db.raw('attempt_count + 1'),
      last_error: error.slice(0, 1000),
    });
}

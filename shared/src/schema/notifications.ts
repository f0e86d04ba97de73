import type { Knex } from 'knex';

/** A claimed notification: what its sender needs to send it and to decide whether to try again. */
export interface ClaimedNotification<Kind extends string = string> {
  id: string;
  account_id: string;
  kind: Kind;
  dedup_key: string;
  recipients: string[];
  /** The recipients an earlier attempt reached already (each recipient gets a message of their own). */
  sent_to: string[];
  attempt_count: number;
}

/**
 * Claims notifications of `kinds` to send (all, or only `ids`), oldest first: pending ones, and ones left `sending`
 * before `staleBefore` by a sender that stopped before recording the outcome. Marks them `sending` and counts the
 * attempt; SKIP LOCKED, so one sender claims each. Each service claims only its own kinds (delivery's digests, usage's
 * quota warnings) and records the outcome only while the row is still `sending`, its claim.
 */
export async function claimNotifications<Kind extends string>(
  trx: Knex.Transaction,
  options: { kinds: readonly Kind[]; ids?: string[]; limit: number; now: Date; staleBefore: Date },
): Promise<ClaimedNotification<Kind>[]> {
  const q = trx('notifications')
    .whereIn('kind', options.kinds)
    .andWhere((w) =>
      w
        .where('status', 'pending')
        .orWhere((s) => s.where('status', 'sending').andWhere('claimed_at', '<', options.staleBefore)),
    );
  if (options.ids) q.whereIn('id', options.ids);
  const rows: ClaimedNotification<Kind>[] = await q
    .orderBy('created_at')
    .limit(options.limit)
    .forUpdate()
    .skipLocked()
    .select('id', 'account_id', 'kind', 'dedup_key', 'recipients', 'sent_to', 'attempt_count');
  if (rows.length > 0)
    await trx('notifications')
      .whereIn(
        'id',
        rows.map((r) => r.id),
      )
      .update({ status: 'sending', claimed_at: options.now, attempt_count: trx.raw('attempt_count + 1') });
  return rows;
}

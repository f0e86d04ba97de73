import { type Db, type Queryable } from '@intake/shared/base';
import { mailboxOf, newId } from '@intake/shared/contracts';
import type { NotificationClaim } from './notification.repository';

/**
 * What claiming a submission's autoresponse found, as for its notification; skipped is no address, or one mailed to
 * that address within the window.
 */
export type AutoresponseClaim = NotificationClaim;

/** Why an autoresponse was not sent, as its notification row records it. */
export const SKIPPED = {
  noAddress: 'no field of the submission holds one e-mail address',
  throttled: 'an autoresponse of this account went to this mailbox less than 10 minutes ago',
} as const;

/**
 * Claims the autoresponse of one submission, in one transaction: its `notifications` row (kind
 * `autoresponse`, once per submission) is created already leased to this process, or an existing
 * pending one nobody holds is leased. When the row is new, the rules decide before anything is
 * sent: no address → `skipped`; an autoresponse of any form of the account to the same mailbox
 * (`mailboxOf`) within `windowMs` → `skipped` (the `autoresponse_mailboxes` row is taken by an upsert
 * that only moves forward once the window has passed, so of a flood of posts naming one mailbox, in
 * whatever spelling and to whichever form, exactly one wins).
 */
export async function claimAutoresponse(
  db: Db,
  ask: { accountId: string; formId: string; submissionId: string; to: string | undefined },
  props: { leaseMs: number; recheckMs: number; windowMs: number; now: Date },
): Promise<AutoresponseClaim> {
  return db.transaction(async (trx) => {
    // Only while the submission is stored; share-locked so that a deletion or erasure either waits for this claim
    // (and removes its row) or is waited for (see lockSubmissions), and an erased submission's row never comes back.
    const stored = await trx.raw(`SELECT 1 FROM submissions WHERE id = ? AND status = 'received' FOR KEY SHARE`, [
      ask.submissionId,
    ]);
    if (stored.rows.length === 0) return { taken: false, done: true };
    const inserted = await trx.raw(
      `INSERT INTO notifications AS t
         (id, account_id, kind, dedup_key, recipients, status, lease_until, next_attempt_at, created_at)
       -- not a payload: recipients is a list of addresses
       VALUES (?, ?, 'autoresponse', ?, ?::jsonb, 'pending', now() + make_interval(secs => ?::float8 / 1000),
         now() + make_interval(secs => ?::float8 / 1000), ?)
       ON CONFLICT (dedup_key) DO UPDATE SET lease_until = EXCLUDED.lease_until, next_attempt_at = EXCLUDED.next_attempt_at
         WHERE t.status = 'pending' AND (t.lease_until IS NULL OR t.lease_until <= now())
       RETURNING t.id, t.attempt_count, (xmax = 0) AS fresh`,
      [
        newId('notification', props.now.getTime()),
        ask.accountId,
        `autoresponse:${ask.submissionId}`,
        JSON.stringify(ask.to ? [ask.to] : []),
        props.leaseMs,
        props.recheckMs,
        props.now,
      ],
    );
    const row = inserted.rows[0] as { id: string; attempt_count: number; fresh: boolean } | undefined;
    if (!row) return unclaimed(trx, ask.submissionId, props.leaseMs);
    if (row.fresh) {
      const skip = ask.to ? await throttled(trx, ask.accountId, ask.to, props) : SKIPPED.noAddress;
      if (skip) {
        await trx('notifications')
          .where({ id: row.id })
          .update({ status: 'skipped', last_error: skip, lease_until: null });
        return { taken: false, done: true };
      }
    }
    return { taken: true, id: row.id, attemptCount: row.attempt_count };
  });
}

/** Why not to send to `to` now (an autoresponse of the account went to its mailbox within the window), or nothing. */
async function throttled(
  trx: Queryable,
  accountId: string,
  to: string,
  props: { windowMs: number; now: Date },
): Promise<string | undefined> {
  const taken = await trx.raw(
    `INSERT INTO autoresponse_mailboxes AS s (account_id, mailbox, sent_at) VALUES (?, ?, ?)
     ON CONFLICT (account_id, mailbox) DO UPDATE SET sent_at = EXCLUDED.sent_at
       WHERE s.sent_at <= EXCLUDED.sent_at - make_interval(secs => ?::float8 / 1000)
     RETURNING 1`,
    [accountId, mailboxOf(to), props.now, props.windowMs],
  );
  return taken.rows.length > 0 ? undefined : SKIPPED.throttled;
}

async function unclaimed(trx: Queryable, submissionId: string, leaseMs: number): Promise<AutoresponseClaim> {
  const other = await trx.raw(
    `SELECT status <> 'pending' AS done,
       least(ceil(?::float8), ceil(greatest(0, extract(epoch FROM lease_until - now()) * 1000)))::int AS remaining_ms
     FROM notifications WHERE dedup_key = ?`,
    [leaseMs, `autoresponse:${submissionId}`],
  );
  const row = other.rows[0] as { done: boolean; remaining_ms: number | null } | undefined;
  if (!row || row.done) return { taken: false, done: true };
  return { taken: false, done: false, remainingMs: row.remaining_ms ?? 0 };
}

import { newId, runPrepared, type Db, type NotificationStatus } from '@intake/shared';

/** What claiming a submission's notification found: this process holds its send, or why not. */
export type NotificationClaim =
  | { taken: true; id: string; attemptCount: number }
  /** Sent or failed for good: nothing to do. */
  | { taken: false; done: true }
  /** Another process (or another copy of the message) is sending it: its lease still runs this long. */
  | { taken: false; done: false; remainingMs: number };

/**
 * The statement of `claimSubmissionNotifications`: creates each submission's notification (once per
 * submission: `dedup_key`) already leased to this process, or leases an existing one that is still
 * pending and that nobody holds. The rows it returns are the ones this process may now send.
 */
const CLAIM_NOTIFICATIONS = {
  name: 'notify_claim',
  text: `INSERT INTO notifications AS t (id, account_id, kind, dedup_key, recipients, status, lease_until)
     SELECT n.id, n.account_id, 'submission', n.dedup_key, n.recipients, 'pending',
       now() + make_interval(secs => $2::float8 / 1000)
     -- not a payload: recipients is a list of addresses
     FROM json_to_recordset($1::json) AS n(id text, account_id text, submission_id text, dedup_key text, recipients jsonb)
     -- only while the submission is stored: an erased one's row is never made again (see lockSubmissions)
     JOIN submissions s ON s.id = n.submission_id AND s.status = 'received'
     ORDER BY n.dedup_key
     FOR KEY SHARE OF s
     ON CONFLICT (dedup_key) DO UPDATE SET lease_until = EXCLUDED.lease_until
       WHERE t.status = 'pending' AND (t.lease_until IS NULL OR t.lease_until <= now())
     RETURNING t.id, t.dedup_key, t.attempt_count`,
};

/** The notifications not claimed: done, or how long their holder's lease still runs (capped at one whole lease). */
const UNCLAIMED_NOTIFICATIONS = {
  name: 'notify_unclaimed',
  text: `SELECT dedup_key, status IN ('sent', 'failed') AS done,
       least(ceil($2::float8), ceil(greatest(0, extract(epoch FROM lease_until - now()) * 1000)))::int AS remaining_ms
     FROM notifications WHERE dedup_key = ANY ($1::text[])`,
};

/**
 * Claims the notification e-mails of several submissions in one statement (see CLAIM_NOTIFICATIONS);
 * a claim is taken only while no other process holds the send, so a copy of a message handled
 * meanwhile waits for that send's outcome. A submission asked for twice in one call is claimed at
 * most once (the later asks wait as if another process held it). Answers in the order asked.
 */
export async function claimSubmissionNotifications(
  db: Db,
  asks: { accountId: string; submissionId: string; recipients: string[] }[],
  props: { leaseMs: number; now: Date },
): Promise<NotificationClaim[]> {
  if (asks.length === 0) return [];
  const keys = asks.map((a) => `submission:${a.submissionId}`);
  const first = new Map<string, number>();
  keys.forEach((key, i) => first.has(key) || first.set(key, i));
  const rows = [...first.values()].map((i) => ({
    id: newId('notification', props.now.getTime()),
    account_id: asks[i]!.accountId,
    submission_id: asks[i]!.submissionId,
    dedup_key: keys[i],
    recipients: asks[i]!.recipients,
  }));
  const claimed = new Map(
    (
      await runPrepared<{ id: string; dedup_key: string; attempt_count: number }>(db, {
        ...CLAIM_NOTIFICATIONS,
        values: [JSON.stringify(rows), props.leaseMs],
      })
    ).map((r) => [r.dedup_key, r]),
  );
  const others = [...first.keys()].filter((key) => !claimed.has(key));
  const unclaimed = new Map(
    others.length === 0
      ? []
      : (
          await runPrepared<{ dedup_key: string; done: boolean; remaining_ms: number | null }>(db, {
            ...UNCLAIMED_NOTIFICATIONS,
            values: [others, props.leaseMs],
          })
        ).map((r) => [r.dedup_key, r]),
  );
  return keys.map((key, i): NotificationClaim => {
    const row = claimed.get(key);
    if (row && first.get(key) === i) return { taken: true, id: row.id, attemptCount: row.attempt_count };
    if (row) return { taken: false, done: false, remainingMs: props.leaseMs };
    const other = unclaimed.get(key);
    // No row at all: the claim found the submission gone (deleted or erased), so there is nothing to send.
    if (!other || other.done) return { taken: false, done: true };
    return { taken: false, done: false, remainingMs: other.remaining_ms ?? 0 };
  });
}

/** The outcome of one send of a notification; recording it ends the send's lease. */
export interface NotificationOutcome {
  id: string;
  status: NotificationStatus;
  attemptCount: number;
  lastError: string | null;
  sentAt?: Date;
}

/** Records the outcomes of several sends (of different notifications) in one statement. */
export async function recordNotificationOutcomes(db: Db, outcomes: NotificationOutcome[]): Promise<void> {
  await runPrepared(db, {
    name: 'notify_record',
    text: `UPDATE notifications t SET status = v.status, attempt_count = v.attempt_count, last_error = v.last_error,
       lease_until = NULL, sent_at = coalesce(v.sent_at, t.sent_at)
     FROM json_to_recordset($1::json) AS v(id text, status text, attempt_count int, last_error text, sent_at timestamptz)
     WHERE t.id = v.id`,
    values: [
      JSON.stringify(
        outcomes.map((o) => ({
          id: o.id,
          status: o.status,
          attempt_count: o.attemptCount,
          last_error: o.lastError,
          sent_at: o.sentAt ?? null,
        })),
      ),
    ],
  });
}

/**
 * Which of these submissions are still stored and `received`: checked right before each send (the claim checked when
 * it was taken), so a submission deleted or erased meanwhile sends nothing more.
 */
export async function storedSubmissions(db: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await runPrepared<{ id: string }>(db, {
    name: 'notify_stored',
    text: `SELECT id FROM submissions WHERE id = ANY ($1::text[]) AND status = 'received'`,
    values: [ids],
  });
  return new Set(rows.map((r) => r.id));
}

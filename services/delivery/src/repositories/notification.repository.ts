import { runPrepared, type Db } from '@intake/shared/base';
import { newId, type NotificationStatus, type StoredFile, type StoredSubmission } from '@intake/shared/contracts';

/** What claiming a submission's notification (or its autoresponse) found: this process holds its send, or why not. */
export type NotificationClaim =
  /** `sentTo`: the recipients an earlier attempt reached already (a notification's; an autoresponse has one). */
  | { taken: true; id: string; attemptCount: number; sentTo?: string[] }
  /** Sent, failed for good or skipped: nothing to do. */
  | { taken: false; done: true }
  /** Another process (or another copy of the message) is sending it: its lease still runs this long. */
  | { taken: false; done: false; remainingMs: number };

/**
 * The statement of `claimSubmissionNotifications`: creates each submission's notification (once per
 * submission: `dedup_key`) already leased to this process, or leases an existing one (the fan-out's, or one waiting
 * for a retry) that is still pending and that nobody holds. Either way the row is due for a look again `$3` ms on
 * (the pump's, in case this process stops before it records the send). The rows it returns are the ones this process
 * may now send.
 */
const CLAIM_NOTIFICATIONS = {
  name: 'notify_claim',
  text: `INSERT INTO notifications AS t (id, account_id, kind, dedup_key, recipients, status, lease_until, next_attempt_at)
     SELECT n.id, n.account_id, 'submission', n.dedup_key, n.recipients, 'pending',
       now() + make_interval(secs => $2::float8 / 1000), now() + make_interval(secs => $3::float8 / 1000)
     -- not a payload: recipients is a list of addresses
     FROM json_to_recordset($1::json) AS n(id text, account_id text, submission_id text, dedup_key text, recipients jsonb)
     -- only while the submission is stored: an erased one's row is never made again (see lockSubmissions)
     JOIN submissions s ON s.id = n.submission_id AND s.status = 'received'
     ORDER BY n.dedup_key
     FOR KEY SHARE OF s
     ON CONFLICT (dedup_key) DO UPDATE SET lease_until = EXCLUDED.lease_until, next_attempt_at = EXCLUDED.next_attempt_at
       WHERE t.status = 'pending' AND (t.lease_until IS NULL OR t.lease_until <= now())
     RETURNING t.id, t.dedup_key, t.attempt_count, t.sent_to`,
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
  props: { leaseMs: number; recheckMs: number; now: Date },
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
      await runPrepared<{ id: string; dedup_key: string; attempt_count: number; sent_to: unknown }>(db, {
        ...CLAIM_NOTIFICATIONS,
        values: [JSON.stringify(rows), props.leaseMs, props.recheckMs],
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
    if (row && first.get(key) === i)
      return { taken: true, id: row.id, attemptCount: row.attempt_count, sentTo: addresses(row.sent_to) };
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
  /** When a pending one is to be tried again (or looked at again, when its message stays in JetStream). */
  nextAttemptAt?: Date;
  /** The recipients its message has gone to so far (left out: as recorded before). */
  sentTo?: string[];
}

/** The addresses of a json list column (anything else in it is left out). */
export function addresses(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((a): a is string => typeof a === 'string') : [];
}

/** Records the outcomes of several sends (of different notifications) in one statement. */
export async function recordNotificationOutcomes(db: Db, outcomes: NotificationOutcome[]): Promise<void> {
  await runPrepared(db, {
    name: 'notify_record',
    text: `UPDATE notifications t SET status = v.status, attempt_count = v.attempt_count, last_error = v.last_error,
       lease_until = NULL, sent_at = coalesce(v.sent_at, t.sent_at), sent_to = coalesce(v.sent_to, t.sent_to),
       next_attempt_at = CASE WHEN v.status = 'pending' THEN v.next_attempt_at END
     FROM json_to_recordset($1::json)
       AS v(id text, status text, attempt_count int, last_error text, sent_at timestamptz, next_attempt_at timestamptz,
         -- not a payload: sent_to is a list of addresses
         sent_to jsonb)
     WHERE t.id = v.id`,
    values: [
      JSON.stringify(
        outcomes.map((o) => ({
          id: o.id,
          status: o.status,
          attempt_count: o.attemptCount,
          last_error: o.lastError,
          sent_at: o.sentAt ?? null,
          next_attempt_at: o.nextAttemptAt ?? null,
          sent_to: o.sentTo ?? null,
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

/**
 * The owners' mail rows of submissions being fanned out (migration 027), `pending`, held by nobody and due for a look
 * `recheckMs` on: if the request the fan-out publishes next is lost, the pump finds the row and asks again. Only for a
 * submission still stored and `received` (as the claim); a row that exists already (a fan-out redelivered) is left.
 */
export async function insertOwnerNotifications(
  db: Db,
  asks: { accountId: string; submissionId: string; recipients: string[] }[],
  props: { recheckMs: number; now: Date },
): Promise<void> {
  if (asks.length === 0) return;
  await runPrepared(db, {
    name: 'notify_fan_out',
    text: `INSERT INTO notifications (id, account_id, kind, dedup_key, recipients, status, next_attempt_at)
     SELECT n.id, n.account_id, 'submission', 'submission:' || n.submission_id, n.recipients, 'pending',
       now() + make_interval(secs => $2::float8 / 1000)
     -- not a payload: recipients is a list of addresses
     FROM json_to_recordset($1::json) AS n(id text, account_id text, submission_id text, recipients jsonb)
     JOIN submissions s ON s.id = n.submission_id AND s.status = 'received'
     ORDER BY n.submission_id
     FOR KEY SHARE OF s
     ON CONFLICT (dedup_key) DO NOTHING`,
    values: [
      JSON.stringify(
        asks.map((a) => ({
          id: newId('notification', props.now.getTime()),
          account_id: a.accountId,
          submission_id: a.submissionId,
          recipients: a.recipients,
        })),
      ),
      props.recheckMs,
    ],
  });
}

/** A pending mail that is due and held by nobody, with what its request is rebuilt from. */
export interface DueNotification {
  id: string;
  kind: 'submission' | 'autoresponse';
  /** Names its request (a request asked for again for the same time is deduplicated). */
  dueAt: Date;
  recipients: string[];
  submission: StoredSubmission | undefined;
  files: StoredFile[];
  formName: string;
}

/**
 * Takes up to `limit` pending mails (owners' and autoresponses) that are due by `now` and held by nobody, in one
 * transaction: those whose submission is still stored and received are handed to `send` (which publishes their
 * requests) and looked at again `recheckMs` later, in case a request is lost again; the others are marked `skipped`
 * (their submission was deleted or erased, or `skip` says why). Rows another process holds are skipped. Returns how
 * many were asked for.
 */
export async function takeDueNotifications(
  db: Db,
  props: { now: Date; limit: number; recheckMs: number },
  send: (due: DueNotification[]) => Promise<{ skipped: Map<string, string> }>,
): Promise<number> {
  return db.transaction(async (trx) => {
    const { rows } = await trx.raw<{ rows: DueRow[] }>(
      `SELECT n.id, n.kind, n.next_attempt_at AS due_at, n.recipients,
         s.id AS submission_id, s.account_id, s.form_id, s.status, s.payload, s.spam_reason, s.received_at, s.directions,
         f.name AS form_name,
         coalesce((SELECT json_agg(json_build_object('id', sf.id, 'field', sf.field, 'filename', sf.filename,
             'content_type', sf.content_type, 'size', sf.size) ORDER BY sf.created_at, sf.id)
           FROM submission_files sf WHERE sf.submission_id = s.id), '[]') AS files
       FROM notifications n
       LEFT JOIN submissions s ON s.id = substr(n.dedup_key, strpos(n.dedup_key, ':') + 1) AND s.status = 'received'
       LEFT JOIN forms f ON f.id = s.form_id
       WHERE n.status = 'pending' AND n.next_attempt_at IS NOT NULL AND n.next_attempt_at <= ?
         AND n.kind IN ('submission', 'autoresponse') AND (n.lease_until IS NULL OR n.lease_until <= now())
       ORDER BY n.next_attempt_at LIMIT ? FOR UPDATE OF n SKIP LOCKED`,
      [props.now, props.limit],
    );
    if (rows.length === 0) return 0;
    const due = rows.map(dueNotification);
    const { skipped } = await send(due.filter((d) => d.submission));
    for (const d of due) if (!d.submission) skipped.set(d.id, 'the submission was deleted before its mail was sent');
    const asked = due.filter((d) => !skipped.has(d.id)).map((d) => d.id);
    if (asked.length > 0)
      await trx('notifications')
        .whereIn('id', asked)
        .update({ next_attempt_at: new Date(props.now.getTime() + props.recheckMs) });
    for (const [id, reason] of skipped)
      await trx('notifications').where({ id }).update({ status: 'skipped', last_error: reason, next_attempt_at: null });
    return asked.length;
  });
}

interface DueRow {
  id: string;
  kind: 'submission' | 'autoresponse';
  due_at: Date;
  recipients: unknown;
  submission_id: string | null;
  account_id: string;
  form_id: string;
  status: StoredSubmission['status'];
  payload: Record<string, string>;
  spam_reason: string | null;
  received_at: Date;
  directions: StoredSubmission['directions'];
  form_name: string | null;
  files: StoredFile[];
}

function dueNotification(r: DueRow): DueNotification {
  return {
    id: r.id,
    kind: r.kind,
    dueAt: r.due_at,
    recipients: addresses(r.recipients),
    submission: r.submission_id
      ? {
          id: r.submission_id,
          account_id: r.account_id,
          form_id: r.form_id,
          status: r.status,
          payload: r.payload,
          spam_reason: r.spam_reason,
          received_at: r.received_at,
          directions: r.directions,
        }
      : undefined,
    files: r.files,
    formName: r.form_name ?? '',
  };
}

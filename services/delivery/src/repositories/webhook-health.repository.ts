import { runPrepared, type Db } from '@intake/shared/base';
import { type ProjectColumns } from '@intake/shared/contracts';

/** A failing webhook as its alert e-mail describes it (its form's project too, which the mail names as its client). */
export interface FailingWebhook extends ProjectColumns {
  id: string;
  form_id: string;
  form_name: string;
  url: string;
  notify_emails: unknown;
  failing_since: Date;
  consecutive_failures: number;
  last_error: string | null;
}

/*
 * The health sweep's statements. Each marks the webhooks it returns in the same statement (alerted,
 * or disabled), so replicas sweeping at once never take the same webhook twice.
 */

const RETURNING = `RETURNING w.id, w.form_id, f.name AS form_name, w.url, f.notify_emails, w.failing_since,
  w.consecutive_failures, f.project_id,
  (SELECT p.name FROM projects p WHERE p.id = f.project_id) AS project_name,
  (SELECT p.is_default FROM projects p WHERE p.id = f.project_id) AS project_is_default,
  (SELECT d.last_error FROM deliveries d WHERE d.webhook_id = w.id AND d.last_error IS NOT NULL
   ORDER BY d.updated_at DESC LIMIT 1) AS last_error`;

/** Enabled webhooks failing since `cutoff` or earlier and not yet alerted for this streak, marked alerted. */
export async function takeWebhooksToAlert(db: Db, props: { cutoff: Date; now: Date }): Promise<FailingWebhook[]> {
  const result = await db.raw(
    `UPDATE webhooks w SET alerted_at = ? FROM forms f
     WHERE f.id = w.form_id AND w.enabled AND w.alerted_at IS NULL AND w.failing_since <= ?
     ${RETURNING}`,
    [props.now, props.cutoff],
  );
  return result.rows as FailingWebhook[];
}

/**
 * Enabled webhooks failing since `cutoff` or earlier, disabled with `disabled_reason = 'failing'`, their
 * notice taken.
 */
export async function disableFailingWebhooks(db: Db, props: { cutoff: Date; now: Date }): Promise<FailingWebhook[]> {
  const result = await db.raw(
    `UPDATE webhooks w SET enabled = false, disabled_reason = 'failing', disabled_notice_at = ?, updated_at = ?
     FROM forms f
     WHERE f.id = w.form_id AND w.enabled AND w.failing_since <= ?
     ${RETURNING}`,
    [props.now, props.now, props.cutoff],
  );
  return result.rows as FailingWebhook[];
}

/** Webhooks disabled for failing whose notice could not be sent before, taken again. */
export async function takeDisabledNoticesDue(db: Db, now: Date): Promise<FailingWebhook[]> {
  const result = await db.raw(
    `UPDATE webhooks w SET disabled_notice_at = ? FROM forms f
     WHERE f.id = w.form_id AND w.disabled_reason = 'failing' AND w.disabled_notice_at IS NULL
     ${RETURNING}`,
    [now],
  );
  return result.rows as FailingWebhook[];
}

/** A notice (the failing alert, or that it was disabled) whose e-mail could not be sent is taken again at the next sweep. */
export async function forgetNotice(
  db: Db,
  webhookId: string,
  notice: 'alerted_at' | 'disabled_notice_at',
): Promise<void> {
  await db('webhooks')
    .where({ id: webhookId })
    .update({ [notice]: null });
}

/**
 * The queued replays the next pump takes, in turns between accounts: the accounts with replays waiting (found by
 * skipping along `deliveries_replay_turns_idx`, one probe an account), each account's oldest `limit`, then the first of
 * every account, the second of every account, and so on, up to `limit`; locked, skipping those another replica holds.
 */
const REPLAY_TURNS = `
  WITH RECURSIVE waiting AS (
    (SELECT account_id FROM deliveries WHERE replay_queued_at IS NOT NULL ORDER BY account_id LIMIT 1)
    UNION ALL
    SELECT (SELECT d.account_id FROM deliveries d
            WHERE d.replay_queued_at IS NOT NULL AND d.account_id > w.account_id ORDER BY d.account_id LIMIT 1)
    FROM waiting w WHERE w.account_id IS NOT NULL
  ), turns AS (
    SELECT q.id, q.replay_queued_at,
      row_number() OVER (PARTITION BY w.account_id ORDER BY q.replay_queued_at, q.id) AS turn
    FROM waiting w CROSS JOIN LATERAL (
      SELECT d.id, d.replay_queued_at FROM deliveries d
      WHERE d.account_id = w.account_id AND d.replay_queued_at IS NOT NULL
      ORDER BY d.replay_queued_at, d.id LIMIT :limit) q
    WHERE w.account_id IS NOT NULL
  )
  SELECT d.id FROM deliveries d
  WHERE d.id IN (SELECT id FROM turns ORDER BY turn, replay_queued_at, id LIMIT :limit)
  FOR UPDATE SKIP LOCKED`;

/**
 * Deliveries waiting for a replay, at most `limit`, shared between the accounts that have any (REPLAY_TURNS): `send`
 * publishes their requests while their rows are locked (another replica's pump skips them), then their marks are
 * cleared in the same transaction, so each is sent once, or again after a failed publish.
 */
export async function takeQueuedReplays(
  db: Db,
  limit: number,
  send: (ids: string[]) => Promise<void>,
): Promise<number> {
  return db.transaction(async (trx) => {
    const rows: { id: string }[] = (await trx.raw(REPLAY_TURNS, { limit })).rows;
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    await send(ids);
    await trx('deliveries').whereIn('id', ids).update({ replay_queued_at: null });
    return ids.length;
  });
}

/** What one process saw of a webhook's attempts since it last wrote them (see `HealthTally`). */
export interface HealthTallyRow {
  webhookId: string;
  /** The latest success and failure. */
  lastOk: Date | null;
  lastFail: Date | null;
  /** Failures after `lastOk` (all of them when there was no success), and the first of them. */
  failsSinceOk: number;
  firstFailSinceOk: Date | null;
}

/**
 * Writes several webhooks' tallies in one statement: the last success and failure, the failures in a row since the
 * last success and when that streak began (a success ends it; the sweep alerts and disables on `failing_since`). A
 * healthy webhook's row is written only when its last success is a second old or more. Rows are taken in id order,
 * so two processes writing at once do not deadlock.
 */
export async function recordWebhookHealth(db: Db, rows: HealthTallyRow[]): Promise<void> {
  if (rows.length === 0) return;
  await runPrepared(db, {
    name: 'webhook_health_record',
    text: `UPDATE webhooks w SET
         last_success_at = greatest(w.last_success_at, h.last_ok),
         last_failure_at = greatest(w.last_failure_at, h.last_fail),
         consecutive_failures = CASE WHEN h.last_ok IS NULL THEN w.consecutive_failures ELSE 0 END + h.fails,
         failing_since = CASE WHEN h.last_ok IS NULL THEN coalesce(w.failing_since, h.first_fail) ELSE h.first_fail END,
         alerted_at = CASE WHEN h.last_ok IS NULL THEN w.alerted_at END
       FROM (SELECT h.* FROM json_to_recordset($1::json)
               AS h(webhook_id text, last_ok timestamptz, last_fail timestamptz, fails int, first_fail timestamptz)
             JOIN webhooks l ON l.id = h.webhook_id ORDER BY h.webhook_id FOR UPDATE OF l) h
       WHERE w.id = h.webhook_id
         AND (h.last_fail IS NOT NULL OR w.consecutive_failures <> 0 OR w.failing_since IS NOT NULL OR w.alerted_at IS NOT NULL
              OR w.last_success_at IS NULL OR w.last_success_at <= h.last_ok - interval '1 second')`,
    values: [
      JSON.stringify(
        rows.map((r) => ({
          webhook_id: r.webhookId,
          last_ok: r.lastOk,
          last_fail: r.lastFail,
          fails: r.failsSinceOk,
          first_fail: r.firstFailSinceOk,
        })),
      ),
    ],
  });
}

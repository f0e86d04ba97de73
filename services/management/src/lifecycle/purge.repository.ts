import type { Knex } from 'knex';
import { type Queryable } from '@intake/shared/base';
import { mailboxOf } from '@intake/shared/contracts';

/** A form's lifecycle settings, as the purge reads them. */
export interface PurgeForm {
  id: string;
  account_id: string;
  retention_days: number | null;
  spam_retention_days: number | null;
  delete_after_delivery: boolean;
  /** When the form went to the trash; null: not in it. */
  deleted_at: Date | null;
}

/**
 * Every form with something the purge may have to do (spam retention is on by default: most forms), the trash
 * included: a form in it, or one with submissions in it.
 */
export async function findPurgeForms(db: Queryable): Promise<PurgeForm[]> {
  return db('forms')
    .whereNotNull('retention_days')
    .orWhereNotNull('spam_retention_days')
    .orWhere('delete_after_delivery', true)
    .orWhereNotNull('deleted_at')
    .orWhereExists(
      db('submissions').whereRaw('submissions.form_id = forms.id').whereNotNull('deleted_at').select(db.raw('1')),
    )
    .orderBy('id')
    .select('id', 'account_id', 'retention_days', 'spam_retention_days', 'delete_after_delivery', 'deleted_at');
}

/**
 * The purge's advisory locks are the two-key form (class, form): apart from the migrators' one-key lock. The class is
 * an arbitrary constant ("PRG1").
 */
const PURGE_LOCK_CLASS = 0x50524731;

/**
 * Runs `work` under a session-level advisory lock on the form, taken without waiting on a connection of its own (held
 * for the work, released after; a replica that dies releases it with its connection). Answers `{ locked: false }`
 * at once when another replica holds it: two replicas never purge the same form at once, and each goes on with the
 * forms the other does not hold.
 */
export async function underFormPurgeLock<T>(
  db: Knex,
  formId: string,
  work: () => Promise<T>,
): Promise<{ locked: false } | { locked: true; value: T }> {
  const client = db.client as {
    acquireConnection(): Promise<PgConnection>;
    releaseConnection(c: PgConnection): Promise<void>;
  };
  const connection = await client.acquireConnection();
  try {
    const { rows } = await connection.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked',
      [PURGE_LOCK_CLASS, formId],
    );
    if (!rows[0]?.locked) return { locked: false };
    try {
      return { locked: true, value: await work() };
    } finally {
      await connection.query('SELECT pg_advisory_unlock($1, hashtext($2))', [PURGE_LOCK_CLASS, formId]);
    }
  } finally {
    await client.releaseConnection(connection);
  }
}
interface PgConnection {
  query<R>(sql: string, values: unknown[]): Promise<{ rows: R[] }>;
}

/**
 * Seconds the oldest submission due for removal has been due, over every form (0 when none): past its form's
 * retention or spam retention, or past its time in the trash (a submission there, or a form there with submissions
 * left). One index probe per form with a limit (the (form_id, received_at) index, the spam and trash partial indexes).
 */
export async function purgeLagSeconds(db: Knex, props: { now: Date; trashDays: number }): Promise<number> {
  const { rows } = await db.raw<{ rows: { lag: number | null }[] }>(
    `WITH now AS (SELECT ?::timestamptz AS t, make_interval(days => ?) AS trash)
     SELECT greatest(0, max(extract(epoch FROM due))) ::float AS lag FROM (
       SELECT (SELECT t FROM now) - make_interval(days => f.retention_days) - o.received_at AS due
       FROM forms f CROSS JOIN LATERAL (SELECT s.received_at FROM submissions s WHERE s.form_id = f.id
                                        ORDER BY s.received_at LIMIT 1) o
       WHERE f.retention_days IS NOT NULL
       UNION ALL
       SELECT (SELECT t FROM now) - make_interval(days => f.spam_retention_days) - o.received_at
       FROM forms f CROSS JOIN LATERAL (SELECT s.received_at FROM submissions s WHERE s.form_id = f.id
                                        AND s.status = 'spam' ORDER BY s.received_at LIMIT 1) o
       WHERE f.spam_retention_days IS NOT NULL
       UNION ALL
       SELECT (SELECT t - trash FROM now) - o.deleted_at
       FROM forms f CROSS JOIN LATERAL (SELECT s.deleted_at FROM submissions s WHERE s.form_id = f.id
                                        AND s.deleted_at IS NOT NULL ORDER BY s.deleted_at LIMIT 1) o
       UNION ALL
       SELECT (SELECT t - trash FROM now) - f.deleted_at FROM forms f
       WHERE f.deleted_at IS NOT NULL AND EXISTS (SELECT 1 FROM submissions s WHERE s.form_id = f.id)
     ) d`,
    [props.now, props.trashDays],
  );
  return Number(rows[0]?.lag ?? 0);
}

/**
 * Up to `limit` of the form's submissions that went to the trash before `before`, or (`all`, for a form that went
 * there before it) any of its submissions.
 */
export async function findTrashed(
  db: Queryable,
  props: { formId: string; before: Date; limit: number; all: boolean },
): Promise<string[]> {
  const query = db('submissions').where('form_id', props.formId);
  if (!props.all) query.andWhere('deleted_at', '<', props.before);
  return query.orderBy('id').limit(props.limit).pluck('id');
}

/** Deletes the forms that went to the trash before `before` and hold no submission any more (their webhooks go too). */
export async function deleteEmptyTrashedForms(
  db: Queryable,
  before: Date,
): Promise<{ id: string; account_id: string }[]> {
  return db('forms')
    .where('deleted_at', '<', before)
    .whereNotExists(db('submissions').whereRaw('submissions.form_id = forms.id').select(db.raw('1')))
    .delete()
    .returning(['id', 'account_id']);
}

/** Up to `limit` submissions of the form received before `before`, oldest first (the form's time index). */
export async function findExpired(
  db: Queryable,
  props: { formId: string; before: Date; limit: number; spamOnly: boolean },
): Promise<string[]> {
  const query = db('submissions').where('form_id', props.formId).andWhere('received_at', '<', props.before);
  if (props.spamOnly) query.andWhere('status', 'spam');
  return query.orderBy('received_at').limit(props.limit).pluck('id');
}

/**
 * Up to `limit` received submissions of the form, not yet tombstoned, whose every webhook delivery has succeeded
 * (each webhook enabled when it arrived has one, and none of its deliveries is anything but succeeded) and whose
 * notification mail is sent (or was skipped), when the form has addresses. A delivery that failed keeps its
 * submission whole until a replay succeeds or retention removes it.
 */
export async function findDelivered(db: Queryable, props: { formId: string; limit: number }): Promise<string[]> {
  const { rows } = await (db as Knex).raw<{ rows: { id: string }[] }>(
    `SELECT s.id FROM submissions s JOIN forms f ON f.id = s.form_id
     WHERE s.form_id = ? AND s.status = 'received' AND s.purged_at IS NULL
       AND NOT EXISTS (
         SELECT 1 FROM webhooks w WHERE w.form_id = s.form_id AND w.enabled AND w.created_at <= s.received_at
           AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.webhook_id = w.id AND d.submission_id = s.id
                             AND d.event_type = 'submission.created' AND d.status = 'succeeded'))
       AND NOT EXISTS (
         SELECT 1 FROM webhooks w JOIN deliveries d ON d.webhook_id = w.id AND d.submission_id = s.id
                                  AND d.event_type = 'submission.created'
         WHERE w.form_id = s.form_id AND d.status <> 'succeeded')
       -- not a payload: notify_emails is the owner's list of addresses
       AND (jsonb_array_length(f.notify_emails) = 0 OR EXISTS (
         SELECT 1 FROM notifications n WHERE n.dedup_key = 'submission:' || s.id AND n.status IN ('sent', 'skipped')))
     ORDER BY s.received_at LIMIT ?`,
    [props.formId, props.limit],
  );
  return rows.map((r) => r.id);
}

/** The storage keys of the submissions' files. */
export async function findFileKeys(db: Queryable, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  return db('submission_files').whereIn('submission_id', ids).orderBy('id').pluck('storage_key');
}

/**
 * Locks the submissions (in id order) before anything of theirs is removed: a fan-out or mail claim running now
 * share-locks them too, so it either finishes first (and what it wrote is removed below) or waits and writes
 * nothing for them. Without it, a delivery or notification written between the removals would outlive them.
 */
async function lockSubmissions(db: Queryable, formId: string, ids: string[]): Promise<void> {
  await db('submissions').where('form_id', formId).whereIn('id', ids).orderBy('id').forUpdate().select('id');
}

/**
 * Deletes the submissions of one form and everything that belongs to them: their deliveries and attempts (with the
 * receivers' answers), their notification and autoresponse rows (and the autoresponse limit's memory of their
 * recipients' mailboxes), their idempotency keys, file rows and spam-filter examples. Quota and usage figures stay.
 * Deliveries are found through the form's webhooks (their unique index), not by a scan of every delivery.
 */
/**
 * A purge batch's transaction waits at most 5 s for a lock, and commits without waiting for the WAL flush, which keeps
 * the purge's commits from queueing before ingest's: a commit lost in a crash leaves rows whose files are gone, which
 * the next run selects again, as after any crash mid-batch.
 */
export async function startPurgeTransaction(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`SET LOCAL lock_timeout = '5s'`);
  await trx.raw(`SET LOCAL synchronous_commit = off`);
}

export async function deleteSubmissionsOfForm(db: Queryable, formId: string, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  await lockSubmissions(db, formId, ids);
  await db('deliveries')
    .whereIn('webhook_id', db('webhooks').where('form_id', formId).select('id'))
    .where('event_type', 'submission.created')
    .whereIn('submission_id', ids)
    .delete();
  const autoresponses = ids.map((id) => `autoresponse:${id}`);
  // The autoresponse's limit remembers which mailboxes the account wrote to: forget those of these submissions' mails.
  const recipients = (
    await db('notifications')
      .whereIn('dedup_key', autoresponses)
      // not a payload: recipients is a list of addresses
      .select<{ r: string }[]>(db.raw('jsonb_array_elements_text(recipients) AS r'))
  ).map((row) => row.r);
  if (recipients.length > 0)
    await db('autoresponse_mailboxes')
      .whereIn('account_id', db('forms').where('id', formId).select('account_id'))
      .whereIn('mailbox', [...new Set(recipients.map(mailboxOf))])
      .delete();
  await db('notifications')
    .whereIn('dedup_key', [...ids.map((id) => `submission:${id}`), ...autoresponses])
    .delete();
  await db('idempotency_keys').where('form_id', formId).whereIn('submission_id', ids).delete();
  // The spam filter's copy of a marked submission's fields goes with it.
  await db('spam_examples').whereIn('submission_id', ids).delete();
  return db('submissions').where('form_id', formId).whereIn('id', ids).delete();
}

/**
 * Turns delivered submissions into tombstones: payload emptied, request metadata, file rows and spam-filter examples
 * gone, `purged_at` set; their deliveries keep their status but not the data they carried, their attempts not the receivers' answers.
 * The rows stay so that a redelivered event finds them and sends nothing again.
 */
export async function tombstoneSubmissions(
  db: Queryable,
  props: { formId: string; ids: string[]; now: Date },
): Promise<number> {
  const { formId, ids, now } = props;
  if (ids.length === 0) return 0;
  await lockSubmissions(db, formId, ids);
  const deliveries = db('deliveries')
    .whereIn('webhook_id', db('webhooks').where('form_id', formId).select('id'))
    .where('event_type', 'submission.created')
    .whereIn('submission_id', ids);
  await db('delivery_attempts')
    .whereIn('delivery_id', deliveries.clone().select('id'))
    .whereNotNull('response_body')
    .update({ response_body: null });
  await deliveries.clone().update({ data: '{}' });
  await db('submission_files').whereIn('submission_id', ids).delete();
  await db('spam_examples').whereIn('submission_id', ids).delete();
  return db('submissions').where('form_id', formId).whereIn('id', ids).whereNull('purged_at').update({
    payload: '{}',
    directions: null,
    ip: null,
    user_agent: null,
    referrer: null,
    file_count: 0,
    file_bytes: 0,
    purged_at: now,
  });
}

/** Adds `count` to the account's purge tally for `reason` (in the caller's transaction, with the removal). */
export async function addToPurgeTally(
  db: Queryable,
  props: { accountId: string; reason: 'retention' | 'spam' | 'delivered' | 'trash' | 'left'; count: number },
): Promise<void> {
  await db.raw(
    `INSERT INTO purge_tally AS t (account_id, ??) VALUES (?, ?)
     ON CONFLICT (account_id) DO UPDATE SET ?? = t.?? + EXCLUDED.??`,
    [props.reason, props.accountId, props.count, props.reason, props.reason, props.reason],
  );
}

export interface PurgeTally {
  account_id: string;
  retention: number;
  spam: number;
  delivered: number;
  trash: number;
  left: number;
}

/**
 * Takes every account's tally for `write` (its audit entry) in one transaction each: a tally another run is taking
 * is skipped, and one written is cleared with its entry, so an entry is written once per removal.
 */
export async function takePurgeTallies(db: Knex, write: (trx: Knex.Transaction, tally: PurgeTally) => Promise<void>) {
  const accounts: string[] = await db('purge_tally').pluck('account_id');
  for (const accountId of accounts)
    await db.transaction(async (trx) => {
      const row = await trx('purge_tally').where('account_id', accountId).forUpdate().skipLocked().first();
      if (!row) return;
      await write(trx, {
        account_id: row.account_id,
        retention: Number(row.retention),
        spam: Number(row.spam),
        delivered: Number(row.delivered),
        trash: Number(row.trash),
        left: Number(row.left),
      });
      await trx('purge_tally').where('account_id', accountId).delete();
    });
}

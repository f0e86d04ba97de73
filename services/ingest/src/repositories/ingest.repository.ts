import type { Knex } from 'knex';
import type { Db, OutboxRow, StoredFile } from '@intake/shared';

/** The form as ingest sees it, with what the checks before the body need: plan limits and this month's usage. */
export interface IngestForm {
  id: string;
  account_id: string;
  name: string;
  status: 'live' | 'paused' | 'draft';
  honeypot_field: string;
  bot_challenge_provider: 'turnstile' | 'hcaptcha' | 'recaptcha' | null;
  bot_challenge_secret: string | null;
  redirect_url: string | null;
  /** Bare origins allowed to post from a browser; empty = any. */
  allowed_origins: string[];
  monthly_quota: number;
  max_file_bytes: number;
  used: number;
}

/**
 * Names the hot statements, so node-postgres prepares each once per connection and Postgres skips
 * parsing and planning them on every post (the SQL of a name must never vary).
 */
function prepared(name: string): { name: string } {
  return { name };
}

/** One query for everything the checks before the body need. `period` is the `YYYY-MM-01` of the current UTC month. */
export async function findFormBySlug(db: Db, slug: string, period: string): Promise<IngestForm | undefined> {
  const row = await db('forms as f')
    .join('accounts as a', 'a.id', 'f.account_id')
    .join('plans as p', 'p.id', 'a.plan_id')
    .leftJoin('usage_counters as u', (j) => j.on('u.account_id', 'f.account_id').andOn('u.period', db.raw('?::date', [period])))
    .where('f.slug', slug)
    .first(
      'f.id', 'f.account_id', 'f.name', 'f.status', 'f.honeypot_field', 'f.bot_challenge_provider', 'f.bot_challenge_secret', 'f.redirect_url', 'f.allowed_origins',
      db.raw('coalesce(a.quota_override, p.monthly_quota)::int as monthly_quota'),
      'p.max_file_bytes',
      db.raw('coalesce(u.used, 0)::int as used'),
    );
  return row as IngestForm | undefined;
}

export interface Replay {
  submission_id: string;
  status: 'received' | 'spam';
}

/** The submission an unexpired idempotency key points to. */
export async function findReplay(db: Db | Knex.Transaction, formId: string, key: string, now: Date): Promise<Replay | undefined> {
  return db('idempotency_keys as k')
    .join('submissions as s', 's.id', 'k.submission_id')
    .where({ 'k.form_id': formId, 'k.key': key })
    .andWhere('k.expires_at', '>', now)
    .first('k.submission_id', 's.status');
}

/**
 * Counts one received submission against the month's quota; false (and nothing changed) when it is
 * used up. One statement in its own transaction, committed without waiting for the WAL flush
 * (`synchronous_commit = off`, local to it), so the account's counter row is locked only while the
 * statement runs, not for an fsync: posts of one account no longer queue behind each other's
 * commits. The caller's durable submission commit, later in the same WAL, makes it durable too.
 */
export async function countAgainstQuota(db: Db, props: { accountId: string; period: string; limit: number }): Promise<boolean> {
  if (props.limit <= 0) return false;
  const { rows } = await db.raw(
    `INSERT INTO usage_counters (account_id, period, used)
     SELECT ?, ?::date, 1 FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit
     ON CONFLICT (account_id, period) DO UPDATE SET used = usage_counters.used + 1
     WHERE usage_counters.used < ?
     RETURNING used`,
    [props.accountId, props.period, props.limit],
  ).options(prepared('ingest_count_quota'));
  return rows.length === 1;
}

/** Gives back a unit counted by `countAgainstQuota` whose submission was not stored (same short, unflushed commit). */
export async function giveBackQuota(db: Db, props: { accountId: string; period: string }): Promise<void> {
  await db.raw(
    `UPDATE usage_counters SET used = used - 1
     FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit
     WHERE account_id = ? AND period = ?::date AND used > 0`,
    [props.accountId, props.period],
  );
}

export interface SubmissionRow {
  id: string;
  account_id: string;
  form_id: string;
  status: 'received' | 'spam';
  payload: Record<string, string>;
  files: (StoredFile & { storage_key: string })[];
  ip: string;
  user_agent: string | null;
  referrer: string | null;
  spam_reason: string | null;
  received_at: Date;
}

const FILES = `jsonb_to_recordset(?::jsonb) AS f(id text, field text, filename text, content_type text, size bigint, storage_key text)`;

/**
 * Writes the submission, its files and its outbox event, and claims its idempotency key (when
 * given), in ONE statement, so one round trip and one transaction. The key is inserted or takes
 * over an expired one; when another request holds it (Postgres makes a concurrent claimer wait
 * for the holder's commit), nothing is written and the answer is false.
 */
export async function writeSubmission(db: Db, props: { row: SubmissionRow; event: OutboxRow; idempotency?: { key: string; expiresAt: Date } }): Promise<boolean> {
  const { row, event, idempotency } = props;
  const { files } = row;
  const claim = idempotency
    ? `claim AS (
         INSERT INTO idempotency_keys (form_id, key, submission_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (form_id, key) DO UPDATE SET submission_id = excluded.submission_id, created_at = excluded.created_at, expires_at = excluded.expires_at
         WHERE idempotency_keys.expires_at <= excluded.created_at
         RETURNING submission_id),`
    : '';
  const { rows } = await db.raw(
    `WITH ${claim}
     sub AS (
       INSERT INTO submissions (id, account_id, form_id, status, payload, file_count, file_bytes, ip, user_agent, referrer, spam_reason, received_at)
       SELECT ?, ?, ?, ?, ?::json, ?, ?, ?, ?, ?, ?, ? ${idempotency ? 'FROM claim' : ''}
       RETURNING id),
     files AS (
       INSERT INTO submission_files (id, submission_id, account_id, field, filename, content_type, size, storage_key, created_at)
       SELECT f.id, sub.id, ?, f.field, f.filename, f.content_type, f.size, f.storage_key, ? FROM sub, ${FILES}),
     event AS (
       INSERT INTO outbox (event_id, subject, payload, headers) SELECT ?, ?, ?::json, ?::jsonb FROM sub)
     SELECT count(*)::int AS stored FROM sub`,
    [
      ...(idempotency ? [row.form_id, idempotency.key, row.id, row.received_at, idempotency.expiresAt] : []),
      row.id, row.account_id, row.form_id, row.status, JSON.stringify(row.payload), files.length, files.reduce((n, f) => n + f.size, 0), row.ip, row.user_agent, row.referrer, row.spam_reason, row.received_at,
      row.account_id, row.received_at, JSON.stringify(files.map(({ id, field, filename, content_type, size, storage_key }) => ({ id, field, filename, content_type, size, storage_key }))),
      event.event_id, event.subject, JSON.stringify(event.payload), JSON.stringify(event.headers),
    ],
  ).options(prepared(idempotency ? 'ingest_write_submission_key' : 'ingest_write_submission'));
  return rows[0].stored === 1;
}

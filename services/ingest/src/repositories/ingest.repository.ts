import type { Knex } from 'knex';
import type { Db, StoredFile } from '@intake/shared';

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
  monthly_quota: number;
  max_file_bytes: number;
  used: number;
}

/** One query for everything the checks before the body need. `period` is the `YYYY-MM-01` of the current UTC month. */
export async function findFormBySlug(db: Db, slug: string, period: string): Promise<IngestForm | undefined> {
  const row = await db('forms as f')
    .join('accounts as a', 'a.id', 'f.account_id')
    .join('plans as p', 'p.id', 'a.plan_id')
    .leftJoin('usage_counters as u', (j) => j.on('u.account_id', 'f.account_id').andOn('u.period', db.raw('?::date', [period])))
    .where('f.slug', slug)
    .first(
      'f.id', 'f.account_id', 'f.name', 'f.status', 'f.honeypot_field', 'f.bot_challenge_provider', 'f.bot_challenge_secret', 'f.redirect_url',
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
 * Claims the key for `submissionId`: inserts it, or takes over an expired one. False when another
 * request holds it (Postgres makes concurrent claimers wait for the first one's commit).
 */
export async function claimIdempotencyKey(trx: Knex.Transaction, props: { formId: string; key: string; submissionId: string; now: Date; expiresAt: Date }): Promise<boolean> {
  const { rows } = await trx.raw(
    `INSERT INTO idempotency_keys (form_id, key, submission_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (form_id, key) DO UPDATE SET submission_id = excluded.submission_id, created_at = excluded.created_at, expires_at = excluded.expires_at
     WHERE idempotency_keys.expires_at <= excluded.created_at
     RETURNING submission_id`,
    [props.formId, props.key, props.submissionId, props.now, props.expiresAt],
  );
  return rows.length === 1;
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
  );
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

export async function insertSubmission(
  trx: Knex.Transaction,
  row: { id: string; account_id: string; form_id: string; status: 'received' | 'spam'; payload: Record<string, string>; files: (StoredFile & { storage_key: string })[]; ip: string; user_agent: string | null; referrer: string | null; spam_reason: string | null; received_at: Date },
): Promise<void> {
  const { files, ...submission } = row;
  await trx('submissions').insert({ ...submission, payload: JSON.stringify(submission.payload), file_count: files.length, file_bytes: files.reduce((n, f) => n + f.size, 0) });
  if (files.length) {
    await trx('submission_files').insert(files.map((f) => ({ id: f.id, submission_id: row.id, account_id: row.account_id, field: f.field, filename: f.filename, content_type: f.content_type, size: f.size, storage_key: f.storage_key, created_at: row.received_at })));
  }
}

import type { Knex } from 'knex';
import { runPrepared, type Db, type OutboxRow, type StoredFile } from '@intake/shared';

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

export type StoreOutcome = 'stored' | 'quota-exceeded' | 'lost-idempotency-race' | 'failed';

export interface StoreResult {
  outcome: StoreOutcome;
  /** For `failed`: the SQLSTATE and message of the error that stopped the write (the unit was given back). */
  failure: string | null;
}

/**
 * Counts a received submission against the month's quota, then writes it with its files, its
 * outbox event and its idempotency claim (when given): one call of the `intake_store_submission`
 * procedure (migration 100 explains its two transactions), so one round trip per post.
 */
export async function storeSubmissionRow(db: Db, props: { row: SubmissionRow; event: OutboxRow; period: string; quota: number; idempotency?: { key: string; expiresAt: Date } }): Promise<StoreResult> {
  const { row, event, idempotency } = props;
  const { files } = row;
  const [result] = await runPrepared<StoreResult>(db, {
    name: 'ingest_store_submission',
    text: 'CALL intake_store_submission($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, NULL, NULL)',
    values: [
      row.id, row.account_id, row.form_id, row.status, JSON.stringify(row.payload), files.length, files.reduce((n, f) => n + f.size, 0),
      row.ip, row.user_agent, row.referrer, row.spam_reason, row.received_at,
      files.length ? JSON.stringify(files.map(({ id, field, filename, content_type, size, storage_key }) => ({ id, field, filename, content_type, size, storage_key }))) : null,
      event.event_id, event.subject, JSON.stringify(event.payload), JSON.stringify(event.headers),
      props.period, props.quota, idempotency?.key ?? null, idempotency?.expiresAt ?? null,
    ],
  });
  return result as StoreResult;
}

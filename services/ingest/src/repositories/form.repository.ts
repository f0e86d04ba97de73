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
    .leftJoin('usage_counters as u', (j) =>
      j.on('u.account_id', 'f.account_id').andOn('u.period', db.raw('?::date', [period])),
    )
    .where('f.slug', slug)
    .first(
      'f.id',
      'f.account_id',
      'f.name',
      'f.status',
      'f.honeypot_field',
      'f.bot_challenge_provider',
      'f.bot_challenge_secret',
      'f.redirect_url',
      'f.allowed_origins',
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
export async function findReplay(
  db: Db | Knex.Transaction,
  formId: string,
  key: string,
  now: Date,
): Promise<Replay | undefined> {
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

export interface StoreItem {
  row: SubmissionRow;
  event: OutboxRow;
  /** The `YYYY-MM-01` of the UTC month the submission counts in. */
  period: string;
  quota: number;
  idempotency?: { key: string; expiresAt: Date };
}

/** SQLSTATE raised by `intake_store_submissions` when an account's quota cannot take the group's posts: nothing of the group was stored. */
export const QUOTA_EXCEEDED_SQLSTATE = 'IQ001';

/** A post as `intake_store_submissions` reads it, serialised once when the post is accepted (its ordinal is added per group). */
export function serializeStoreItem({ row, event, period, quota }: StoreItem): string {
  return JSON.stringify({
    id: row.id,
    account_id: row.account_id,
    form_id: row.form_id,
    status: row.status,
    ip: row.ip,
    user_agent: row.user_agent,
    referrer: row.referrer,
    spam_reason: row.spam_reason,
    received_at: row.received_at,
    files: row.files.length
      ? row.files.map(({ id, field, filename, content_type, size, storage_key }) => ({
          id,
          field,
          filename,
          content_type,
          size,
          storage_key,
        }))
      : null,
    event_id: event.event_id,
    subject: event.subject,
    // The submission's fields are stored from the event's copy: they travel once. An event that
    // goes without them (too large for a message) leaves them here.
    payload: event.payload.payload_omitted ? row.payload : undefined,
    event: event.payload,
    headers: event.headers,
    period,
    quota,
  });
}

/** The ordinals (places in the group, from 0) of the posts that were not stored, by reason; every other post was stored. */
export interface GroupResult {
  /** Lost their idempotency claim to another request. */
  lost: number[];
  /** Over quota (only when admitting). */
  refused: number[];
  /** Their form was deleted after ingest read it. */
  gone: number[];
}

/**
 * Stores a group of posts (with their files, outbox events and idempotency claims) and counts
 * the received ones, in one transaction: one call of `intake_store_submissions` (migration 130
 * explains it). Without `admit` it raises `QUOTA_EXCEEDED_SQLSTATE` when a quota cannot take all
 * of the group, having stored nothing; with `admit` it stores the posts the quota still takes.
 */
export async function storeSubmissionRows(
  db: Db,
  group: readonly { item: StoreItem; json: string }[],
  admit: boolean,
): Promise<GroupResult> {
  const claims = group.flatMap(({ item: { row, idempotency } }, n) =>
    idempotency
      ? [
          {
            n,
            form_id: row.form_id,
            key: idempotency.key,
            submission_id: row.id,
            created_at: row.received_at,
            expires_at: idempotency.expiresAt,
          },
        ]
      : [],
  );
  // Each post's JSON is an object; its ordinal goes in front of its first key.
  const items = `[${group.map(({ json }, n) => `{"n":${n},${json.slice(1)}`).join(',')}]`;
  const [result] = await runPrepared<GroupResult>(db, {
    name: 'ingest_store_submissions',
    text: 'SELECT lost, refused, gone FROM intake_store_submissions($1, $2, $3)',
    values: [items, claims.length ? JSON.stringify(claims) : null, admit],
  });
  return result ?? { lost: [], refused: [], gone: [] };
}

import { runPrepared, type Db } from '../base/db';
import {
  buildSubmissionCreatedEvent,
  EVENT_PAYLOAD_MAX_BYTES,
  type StoredFile,
  type StoredSubmission,
} from '../contracts/events';
import { outboxRow, type OutboxEvent, type OutboxRow } from '../messaging/outbox';
import { periodKey, toTimestamp } from '../contracts/time';

/** A file of a post, as stored: its metadata and where its bytes are (`<account>/<form>/<submission>/<file>`). */
export interface StoredUpload extends StoredFile {
  storage_key: string;
}

/** An accepted post, everything its stored submission, files, event, claim and quota unit are made of. */
export interface PostToStore {
  submissionId: string;
  form: { id: string; account_id: string; name: string; monthly_quota: number };
  receivedAt: Date;
  /** Why it is spam, or undefined for a received post. */
  spam: string | undefined;
  payload: Record<string, string>;
  files: StoredUpload[];
  idempotency?: { key: string; expiresAt: Date };
  ip: string;
  userAgent: string | undefined;
  referrer: string | undefined;
}

/** A submission as ingest stores it, with its files. */
export interface SubmissionToStore extends StoredSubmission {
  files: StoredUpload[];
  ip: string;
  user_agent: string | null;
  referrer: string | null;
}

export interface StoreItem {
  row: SubmissionToStore;
  event: OutboxRow;
  /** The `YYYY-MM-01` of the UTC month the submission counts in. */
  period: string;
  quota: number;
  idempotency?: { key: string; expiresAt: Date };
}

/**
 * A post ready for `storeSubmissions`: its item, serialised once (as the store function reads it),
 * that JSON's UTF-8 size, and its event as it is published (its payload is the very text the item
 * carries to the outbox).
 */
export interface PreparedPost {
  item: StoreItem;
  json: string;
  bytes: number;
  event: OutboxEvent;
}

/**
 * The post as `intake_store_submissions` stores it; its event goes without the fields when the
 * post is too large for a message (`EVENT_PAYLOAD_MAX_BYTES`: consumers read them from the submission),
 * or when `omitPayload` says so (tests of that path with small posts).
 */
export function preparePost(post: PostToStore, options: { omitPayload?: boolean } = {}): PreparedPost {
  if (options.omitPayload) return serialized(storeItem(post, true));
  const whole = serialized(storeItem(post, false));
  return whole.bytes <= EVENT_PAYLOAD_MAX_BYTES ? whole : serialized(storeItem(post, true));
}

function serialized(item: StoreItem): PreparedPost {
  const { event_id, subject, headers } = item.event;
  const payload = JSON.stringify(item.event.payload);
  const json = serializeStoreItem(item, payload);
  return { item, json, bytes: Buffer.byteLength(json), event: { event_id, subject, payload, headers } };
}

function storeItem(post: PostToStore, omitPayload: boolean): StoreItem {
  const row: SubmissionToStore = {
    id: post.submissionId,
    account_id: post.form.account_id,
    form_id: post.form.id,
    status: post.spam ? 'spam' : 'received',
    payload: post.payload,
    files: post.files,
    ip: post.ip,
    user_agent: post.userAgent?.slice(0, 512) ?? null,
    referrer: post.referrer?.slice(0, 2048) ?? null,
    spam_reason: post.spam ?? null,
    received_at: post.receivedAt,
  };
  const event = buildSubmissionCreatedEvent({
    submission: row,
    files: post.files,
    formName: post.form.name,
    omitPayload,
  });
  return {
    row,
    // No NOTIFY (it would serialise commits on the fsync): the caller wakes this process's relay after commit.
    event: outboxRow(event),
    period: periodKey(post.receivedAt),
    quota: post.form.monthly_quota,
    idempotency: post.idempotency,
  };
}

/** SQLSTATE raised by `intake_store_submissions` when an account's quota cannot take the group's posts: nothing of the group was stored. */
export const QUOTA_EXCEEDED_SQLSTATE = 'IQ001';

/**
 * A post as `intake_store_submissions` reads it, serialised once when the post is accepted (its
 * ordinal is added per group); `eventJson`, the event's payload as JSON, when the caller has it.
 */
export function serializeStoreItem(
  { row, event, period, quota }: StoreItem,
  eventJson = JSON.stringify(event.payload),
): string {
  const json = JSON.stringify({
    id: row.id,
    account_id: row.account_id,
    form_id: row.form_id,
    status: row.status,
    ip: row.ip,
    user_agent: row.user_agent,
    referrer: row.referrer,
    spam_reason: row.spam_reason,
    received_at: toTimestamp(row.received_at),
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
    headers: event.headers,
    period,
    quota,
  });
  // The event goes in as the text that is published: the outbox keeps it as written (json).
  return `${json.slice(0, -1)},"event":${eventJson}}`;
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
 * The caller wakes the outbox relays (`wakeOutboxRelays`) after it returns.
 */
export async function storeSubmissions(
  db: Db,
  group: readonly Pick<PreparedPost, 'item' | 'json'>[],
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

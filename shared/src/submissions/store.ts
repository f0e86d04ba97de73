import {
  discardConnection,
  runPrepared,
  withBackendPid,
  withPooledConnection,
  type Db,
  type Queryable,
} from '../base/db';
import { CLAIM_AND_ADMIT, STORE_GROUP, WITHDRAW_CLAIMS } from './store-submissions.sql';
import {
  buildSubmissionCreatedEvent,
  EVENT_PAYLOAD_MAX_BYTES,
  type Directions,
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
  /** What the spam filter recorded: the classifier's score (absent: it did not run) and every reason it found, shadow ones too. */
  filter?: { score: number | null; reasons: string[]; payloadHash?: string };
  payload: Record<string, string>;
  /** What the control fields asked of the notification, when anything. */
  directions?: Directions;
  files: StoredUpload[];
  idempotency?: { key: string; expiresAt: Date };
  ip: string;
  userAgent: string | undefined;
  referrer: string | undefined;
}

/** A submission as ingest stores it, with its files. */
export interface SubmissionToStore extends StoredSubmission {
  files: StoredUpload[];
  spam_score: number | null;
  spam_reasons: string[] | null;
  /** Set only on forms that refuse duplicates (see `SpamRules.reject_duplicates`). */
  payload_hash: string | null;
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
 * A post ready for `storeSubmissions`: its item, serialised once as the store function reads it
 * (`json`: its submission and files), its event as it is published (`event.payload`, the very text
 * the outbox keeps), and the UTF-8 size of both.
 */
export interface PreparedPost {
  item: StoreItem;
  json: string;
  bytes: number;
  event: OutboxEvent;
}

/**
 * The post as `storeSubmissions` stores it; its event goes without the fields when the
 * post is too large for a message (`EVENT_PAYLOAD_MAX_BYTES`: consumers read them from the submission),
 * or when `omitPayload` says so (tests of that path with small posts).
 */
export function preparePost(post: PostToStore, options: { omitPayload?: boolean } = {}): PreparedPost {
  if (options.omitPayload) return prepareItem(storeItem(post, true));
  const whole = prepareItem(storeItem(post, false));
  return whole.bytes <= EVENT_PAYLOAD_MAX_BYTES ? whole : prepareItem(storeItem(post, true));
}

/** An item serialised as `storeSubmissions` sends it (`preparePost` does this; tests that alter an item call it again). */
export function prepareItem(item: StoreItem): PreparedPost {
  const { event_id, subject, headers } = item.event;
  const payload = JSON.stringify(item.event.payload);
  const json = serializeStoreItem(item);
  return {
    item,
    json,
    bytes: Buffer.byteLength(json) + Buffer.byteLength(payload),
    event: { event_id, subject, payload, headers },
  };
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
    spam_score: post.filter?.score ?? null,
    spam_reasons: post.filter?.reasons.length ? post.filter.reasons : null,
    payload_hash: post.filter?.payloadHash ?? null,
    received_at: post.receivedAt,
    directions: post.directions && Object.keys(post.directions).length > 0 ? post.directions : null,
  };
  const event = buildSubmissionCreatedEvent({
    submission: row,
    files: post.files,
    formName: post.form.name,
    omitPayload,
  });
  return {
    row,
    // No NOTIFY (it would serialise commits on the fsync): the caller publishes it after the commit.
    event: outboxRow(event),
    period: periodKey(post.receivedAt),
    quota: post.form.monthly_quota,
    idempotency: post.idempotency,
  };
}

/** SQLSTATE raised by `storeSubmissions` (`intake_count_received`) when an account's quota cannot take the group's posts: nothing of the group was stored. */
export const QUOTA_EXCEEDED_SQLSTATE = 'IQ001';

/** A post's submission, files and idempotency claim as `storeSubmissions` sends them (its event goes beside it, as published). */
function serializeStoreItem({ row, event, period, quota, idempotency }: StoreItem): string {
  return JSON.stringify({
    id: row.id,
    account_id: row.account_id,
    form_id: row.form_id,
    status: row.status,
    ip: row.ip,
    user_agent: row.user_agent,
    referrer: row.referrer,
    spam_reason: row.spam_reason,
    spam_score: row.spam_score,
    spam_reasons: row.spam_reasons,
    payload_hash: row.payload_hash,
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
    idempotency_key: idempotency?.key,
    idempotency_expires_at: idempotency ? toTimestamp(idempotency.expiresAt) : undefined,
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
 * Stores a group of posts, with their files, outbox events and idempotency claims, and counts the
 * received ones, in one transaction (`store-submissions.sql.ts` names each rule's part):
 *
 * - without `admit`, one statement (`STORE_GROUP`): the claims (a post whose key another request
 *   holds is `lost`), the submissions, files and events (a post whose form is deleted is `gone`),
 *   and last the count, all or nothing (`countReceived`'s function): when an account's month
 *   cannot take all of its posts it raises `QUOTA_EXCEEDED_SQLSTATE`, and nothing was stored;
 * - with `admit` (the caller's second try): the claims and each month admitting its received posts
 *   in order while units remain, first (`CLAIM_AND_ADMIT`); the others are `refused` and keep no
 *   claim (`WITHDRAW_CLAIMS`); then the same statement stores the rest, counted already.
 *
 * Spam is never counted. After it returns the caller publishes the stored posts' events
 * (`Outbox.publish`); what it does not publish, the outbox relay does.
 */
export async function storeSubmissions(
  db: Db,
  group: readonly Pick<PreparedPost, 'item' | 'json' | 'event'>[],
  admit: boolean,
): Promise<GroupResult> {
  const posts = group.map((p) => p.json);
  const events = group.map((p) => p.event.payload);
  if (admit) return admitAndStore(db, group, [posts, events]);
  const [stored] = await runPrepared<{ lost: number[]; gone: number[] }>(db, {
    name: 'ingest_store_submissions',
    text: STORE_GROUP,
    values: [posts, events, true, [], true],
  });
  return { lost: stored?.lost ?? [], refused: [], gone: stored?.gone ?? [] };
}

/** `storeSubmissions` admitting what the quota still takes: three statements in one transaction. */
function admitAndStore(
  db: Db,
  group: readonly Pick<PreparedPost, 'item'>[],
  [posts, events]: [string[], string[]],
): Promise<GroupResult> {
  return withPooledConnection(db, async (connection) => {
    try {
      await connection.query('BEGIN');
      const { rows } = await connection.query<Admission>(CLAIM_AND_ADMIT, [posts, events, true]);
      const { lost, months } = rows[0] ?? { lost: [], months: [] };
      const refused = months.flatMap((month) => month.posts.slice(month.admitted)).sort((a, b) => a - b);
      const claims = refused.flatMap((n) => {
        const { row, idempotency } = group[n]!.item;
        return idempotency ? [{ form_id: row.form_id, key: idempotency.key, submission_id: row.id }] : [];
      });
      if (claims.length > 0) await connection.query(WITHDRAW_CLAIMS, [JSON.stringify(claims)]);
      const stored = await connection.query<{ gone: number[] }>(STORE_GROUP, [
        posts,
        events,
        false,
        [...lost, ...refused],
        false,
      ]);
      await connection.query('COMMIT');
      return { lost, refused, gone: stored.rows[0]?.gone ?? [] };
    } catch (err) {
      await connection.query('ROLLBACK').catch((rollbackErr: unknown) => discardConnection(connection, rollbackErr));
      throw withBackendPid(err, connection);
    }
  });
}

/** What `CLAIM_AND_ADMIT` answers: the posts that lost their claim, and per month its received posts and how many it admitted. */
interface Admission {
  lost: number[];
  months: { posts: number[]; admitted: number }[];
}

/**
 * Counts received submissions in an account's month (`usage_counters.used`, the number the
 * quota is enforced on): the one count, which ingest's store makes for its posts and management
 * makes when an owner marks a submission received (no quota then: it counts).
 */
export async function countReceived(
  db: Queryable,
  props: { accountId: string; period: string; count?: number },
): Promise<void> {
  await db.raw('SELECT intake_count_received(?::text, ?::date, ?::int, NULL, false)', [
    props.accountId,
    props.period,
    props.count ?? 1,
  ]);
}

import { context, trace, type SpanContext } from '@opentelemetry/api';
import {
  outboxRow,
  problem,
  SUBJECTS,
  toTimestamp,
  wakeOutboxRelays,
  type Platform,
  type SubmissionEvent,
  isForeignKeyViolation,
  isStatementError,
  EVENT_PAYLOAD_MAX_BYTES,
  inActiveSpan,
} from '@intake/shared';
import {
  QUOTA_EXCEEDED_SQLSTATE,
  serializeStoreItem,
  storeSubmissionRows,
  type GroupResult,
  type IngestForm,
  type StoreItem,
} from '../repositories/ingest.repository';
import { GroupQueue } from './group-queue';
import { formCacheOf } from './form-cache';
import { quotaExceeded } from './gate';
import { LIMITS } from './limits';
import type { StoredUpload } from './parse-multipart';

export interface Accepted {
  form: IngestForm;
  period: string;
  now: Date;
  submissionId: string;
  spam: string | undefined;
  payload: Record<string, string>;
  files: StoredUpload[];
  idempotencyKey: string | undefined;
  ip: string;
  userAgent: string | undefined;
  referrer: string | undefined;
}

/**
 * Stores an accepted post: its submission, files, outbox event and idempotency claim, and (when
 * received, not spam) its quota unit, in one transaction, so nothing is ever half-stored or
 * counted without its submission. Posts that arrive while this process's previous stores are in
 * flight are stored together in the next transaction (`GroupQueue`: one round trip and one WAL
 * flush for the group; a quiet service stores each post alone, at once). Each post still gets its
 * own answer: stored, lost its idempotency claim, over quota (402), or its form deleted (404).
 */
export async function storeSubmission(props: {
  platform: Platform;
  accepted: Accepted;
}): Promise<'stored' | 'lost-idempotency-race'> {
  let item = storeItem(props.accepted, false);
  let json = serializeStoreItem(item);
  let bytes = Buffer.byteLength(json);
  if (bytes > EVENT_PAYLOAD_MAX_BYTES) {
    // Too large to travel in the event: the event goes without the fields (consumers read them from the submission).
    item = storeItem(props.accepted, true);
    json = serializeStoreItem(item);
    bytes = Buffer.byteLength(json);
  }
  return writerOf(props.platform).push({
    item,
    json,
    bytes,
    form: props.accepted.form,
    span: trace.getSpanContext(context.active()),
  });
}

interface Pending {
  item: StoreItem;
  /** The post as the store function reads it, serialised when it was accepted. */
  json: string;
  /** The UTF-8 size of `json`. */
  bytes: number;
  form: IngestForm;
  /** The request's span: the group's span links to it. */
  span: SpanContext | undefined;
}

type Outcome = 'stored' | 'lost-idempotency-race';

/**
 * Per process: at most 64 posts and 4 MiB of them per transaction (a larger post goes alone), and
 * two transactions in flight. Postgres waits at most 5 s for a lock inside one (the function sets
 * lock_timeout; then the group is answered 503), so posts never queue long behind a locked row.
 */
const GROUP = { maxPosts: 64, maxBytes: 4 * 1024 * 1024, maxInFlight: 2 };

const writers = new WeakMap<Platform, GroupQueue<Pending, Outcome>>();

function writerOf(platform: Platform): GroupQueue<Pending, Outcome> {
  let writer = writers.get(platform);
  if (!writer) {
    writer = new GroupQueue((group) => writeGroup(platform, group), {
      maxGroup: GROUP.maxPosts,
      maxInFlight: GROUP.maxInFlight,
      weigh: (p) => p.bytes,
      maxWeight: GROUP.maxBytes,
    });
    writers.set(platform, writer);
  }
  return writer;
}

const tracer = trace.getTracer('intake-ingest');

/**
 * Stores a group in one transaction. A group its quota cannot take is written again admitting
 * posts in order while units remain; a group Postgres refuses as a whole (a value it cannot take,
 * a race with a deletion, a deadlock) is written post by post, one at a time, so one bad post fails
 * alone without flooding the pool. Errors of the connection or the server, and a lock time-out,
 * fail the whole group (503).
 */
async function writeGroup(platform: Platform, group: Pending[]): Promise<PromiseSettledResult<Outcome>[]> {
  let result: GroupResult;
  try {
    result = await inGroupSpan(group, async () => {
      try {
        return await storeSubmissionRows(platform.db, group, false);
      } catch (err) {
        if ((err as { code?: string }).code !== QUOTA_EXCEEDED_SQLSTATE) throw err;
        return storeSubmissionRows(platform.db, group, true);
      }
    });
  } catch (err) {
    if (group.length === 1) return [{ status: 'rejected', reason: isForeignKeyViolation(err) ? formGone() : err }];
    if (!isStatementError(err)) throw err;
    const results: PromiseSettledResult<Outcome>[] = [];
    for (const pending of group) results.push(...(await writeGroup(platform, [pending])));
    return results;
  }
  wakeOutboxRelays();
  return group.map((pending, n): PromiseSettledResult<Outcome> => {
    if (result.lost.includes(n)) return { status: 'fulfilled', value: 'lost-idempotency-race' };
    if (result.gone.includes(n)) return { status: 'rejected', reason: formGone() };
    if (result.refused.includes(n)) {
      formCacheOf(platform, platform.config.FORM_CACHE_MS).usedUp(pending.form.account_id, pending.item.period);
      return { status: 'rejected', reason: quotaExceeded(pending.item.quota) };
    }
    return { status: 'fulfilled', value: 'stored' };
  });
}

/** The form (or its account) was deleted after ingest read it (it is cached briefly): as if it never existed. */
function formGone() {
  return problem('form-not-found', 'The form no longer exists');
}

/** A group's write gets a trace of its own, linked to the trace of every post in it. */
function inGroupSpan<T>(group: Pending[], write: () => Promise<T>): Promise<T> {
  const links = group.flatMap((p) => (p.span ? [{ context: p.span }] : []));
  return inActiveSpan(
    tracer,
    'ingest store group',
    { root: true, links, attributes: { 'intake.ingest.group_size': group.length } },
    write,
  );
}

function storeItem(a: Accepted, omitPayload: boolean): StoreItem {
  const status = a.spam ? 'spam' : 'received';
  const payload: Omit<SubmissionEvent, 'event_id'> = {
    submission_id: a.submissionId,
    form_id: a.form.id,
    account_id: a.form.account_id,
    status,
    received_at: toTimestamp(a.now),
    ...(omitPayload ? { payload: {}, payload_omitted: true as const } : { payload: a.payload }),
    files: a.files.map(({ id, field, filename, content_type, size }) => ({ id, field, filename, content_type, size })),
    file_bytes: a.files.reduce((n, f) => n + f.size, 0),
    form_name: a.form.name,
  };
  return {
    row: {
      id: a.submissionId,
      account_id: a.form.account_id,
      form_id: a.form.id,
      status,
      payload: a.payload,
      files: a.files,
      ip: a.ip,
      user_agent: a.userAgent?.slice(0, 512) ?? null,
      referrer: a.referrer?.slice(0, 2048) ?? null,
      spam_reason: a.spam ?? null,
      received_at: a.now,
    },
    // No NOTIFY (it would serialise commits on the fsync): this process's relay is woken after commit.
    event: outboxRow({ subject: a.spam ? SUBJECTS.submissionSpam : SUBJECTS.submissionCreated, payload }),
    period: a.period,
    quota: a.form.monthly_quota,
    idempotency:
      a.idempotencyKey === undefined
        ? undefined
        : { key: a.idempotencyKey, expiresAt: new Date(a.now.getTime() + LIMITS.idempotencyMs) },
  };
}

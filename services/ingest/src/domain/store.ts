import { context, SpanStatusCode, trace, type SpanContext } from '@opentelemetry/api';
import { outboxRow, problem, SUBJECTS, toTimestamp, wakeOutboxRelays, type Platform, type SubmissionEvent, isForeignKeyViolation, isStatementError } from '@intake/shared';
import { QUOTA_EXCEEDED_SQLSTATE, storeSubmissionRows, type IngestForm, type StoreItem } from '../repositories/ingest.repository';
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
 * counted without its submission. Posts that arrive while this process's previous store is in
 * flight are stored together in the next transaction (`GroupQueue`: one round trip and one WAL
 * flush for the group; a quiet service stores each post alone, at once). When a group cannot be
 * stored as a whole (a quota that cannot take all of it, a form deleted meanwhile, a value
 * Postgres refuses), its posts are stored one by one, so each gets its own answer and the quota
 * stops exactly at its limit.
 */
export async function storeSubmission(props: { platform: Platform; accepted: Accepted }): Promise<'stored' | 'lost-idempotency-race'> {
  return writerOf(props.platform).push({ item: storeItem(props.accepted), form: props.accepted.form, span: trace.getSpanContext(context.active()) });
}

interface Pending {
  item: StoreItem;
  form: IngestForm;
  /** The request's span: the group's span links to it. */
  span: SpanContext | undefined;
}

type Outcome = 'stored' | 'lost-idempotency-race';

/** At most this many posts per transaction, and this many transactions in flight per process. */
const GROUP = { maxPosts: 64, maxInFlight: 2 };

const writers = new WeakMap<Platform, GroupQueue<Pending, Outcome>>();

function writerOf(platform: Platform): GroupQueue<Pending, Outcome> {
  let writer = writers.get(platform);
  if (!writer) writers.set(platform, (writer = new GroupQueue((group) => writeGroup(platform, group), { maxGroup: GROUP.maxPosts, maxInFlight: GROUP.maxInFlight })));
  return writer;
}

const tracer = trace.getTracer('intake-ingest');

/** Stores a group in one transaction; a group that fails as a whole is stored post by post. */
async function writeGroup(platform: Platform, group: Pending[]): Promise<PromiseSettledResult<Outcome>[]> {
  let lost: number[];
  try {
    lost = await inGroupSpan(group, () => storeSubmissionRows(platform.db, group.map((p) => p.item)));
  } catch (err) {
    if (group.length === 1) return [{ status: 'rejected', reason: refusal(platform, group[0] as Pending, err) }];
    if (isStatementError(err)) return Promise.allSettled(group.map((pending) => writeOne(platform, pending)));
    throw err;
  }
  wakeOutboxRelays();
  return group.map((_, n) => ({ status: 'fulfilled', value: lost.includes(n) ? 'lost-idempotency-race' : 'stored' }));
}

async function writeOne(platform: Platform, pending: Pending): Promise<Outcome> {
  const [result] = await writeGroup(platform, [pending]);
  if (result?.status === 'fulfilled') return result.value;
  throw result?.reason;
}

/** What a post that could not be stored on its own is answered: over quota (402), its form gone (404), else the error itself. */
function refusal(platform: Platform, pending: Pending, err: unknown): unknown {
  if ((err as { code?: string }).code === QUOTA_EXCEEDED_SQLSTATE) {
    formCacheOf(platform, platform.config.FORM_CACHE_MS).usedUp(pending.form.account_id, pending.item.period);
    return quotaExceeded(pending.item.quota);
  }
  // The form (or its account) was deleted after ingest read it (it is cached briefly): as if it never existed.
  if (isForeignKeyViolation(err)) return problem('form-not-found', 'The form no longer exists');
  return err;
}

/** A group's write gets a trace of its own, linked to the trace of every post in it. */
function inGroupSpan<T>(group: Pending[], write: () => Promise<T>): Promise<T> {
  const links = group.flatMap((p) => (p.span ? [{ context: p.span }] : []));
  return tracer.startActiveSpan('ingest store group', { root: true, links, attributes: { 'intake.ingest.group_size': group.length } }, async (span) => {
    try {
      return await write();
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

function storeItem(a: Accepted): StoreItem {
  const status = a.spam ? 'spam' : 'received';
  const payload: Omit<SubmissionEvent, 'event_id'> = {
    submission_id: a.submissionId,
    form_id: a.form.id,
    account_id: a.form.account_id,
    status,
    received_at: toTimestamp(a.now),
    payload: a.payload,
    files: a.files.map(({ id, field, filename, content_type, size }) => ({ id, field, filename, content_type, size })),
    file_bytes: a.files.reduce((n, f) => n + f.size, 0),
    form_name: a.form.name,
  };
  return {
    row: { id: a.submissionId, account_id: a.form.account_id, form_id: a.form.id, status, payload: a.payload, files: a.files, ip: a.ip, user_agent: a.userAgent?.slice(0, 512) ?? null, referrer: a.referrer?.slice(0, 2048) ?? null, spam_reason: a.spam ?? null, received_at: a.now },
    // No NOTIFY (it would serialise commits on the fsync): this process's relay is woken after commit.
    event: outboxRow({ subject: a.spam ? SUBJECTS.submissionSpam : SUBJECTS.submissionCreated, payload }),
    period: a.period,
    quota: a.form.monthly_quota,
    idempotency: a.idempotencyKey === undefined ? undefined : { key: a.idempotencyKey, expiresAt: new Date(a.now.getTime() + LIMITS.idempotencyMs) },
  };
}

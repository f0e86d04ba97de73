import { outboxRow, problem, SUBJECTS, toTimestamp, wakeOutboxRelays, type Platform, type SubmissionEvent, isForeignKeyViolation } from '@intake/shared';
import { storeSubmissionRow, type IngestForm, type StoreResult } from '../repositories/ingest.repository';
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
 * Stores an accepted post in one round trip (see `storeSubmissionRow`): a received one is first
 * counted against the quota (exact under concurrency: the conditional update serialises
 * check-and-increment) in its own short commit that does not wait for the WAL flush; then the
 * submission, its idempotency key and its event are written durably (the outbox). When that
 * write fails, the procedure gives the unit back. A crash or a lost connection between the two
 * over-counts by at most the posts in flight.
 */
export async function storeSubmission(props: { platform: Platform; accepted: Accepted }): Promise<'stored' | 'lost-idempotency-race'> {
  const { platform, accepted: a } = props;
  const { outcome, failure } = await write(platform, a).catch(deletedMeanwhile);
  if (outcome === 'quota-exceeded') {
    formCacheOf(platform, platform.config.FORM_CACHE_MS).usedUp(a.form.account_id, a.period);
    throw quotaExceeded(a.form.monthly_quota);
  }
  if (outcome === 'failed') {
    // The write failed after the count, which the procedure gave back: raise what Postgres said.
    const code = (failure ?? '').slice(0, 5);
    deletedMeanwhile(Object.assign(new Error(`The submission could not be stored: ${failure}`), { code }));
  }
  if (outcome === 'stored') wakeOutboxRelays();
  return outcome;
}

async function write(platform: Platform, a: Accepted): Promise<StoreResult> {
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
  return storeSubmissionRow(platform.db, {
    row: { id: a.submissionId, account_id: a.form.account_id, form_id: a.form.id, status, payload: a.payload, files: a.files, ip: a.ip, user_agent: a.userAgent?.slice(0, 512) ?? null, referrer: a.referrer?.slice(0, 2048) ?? null, spam_reason: a.spam ?? null, received_at: a.now },
    // No NOTIFY (it would serialise commits on the fsync): this process's relay is woken after commit.
    event: outboxRow({ subject: a.spam ? SUBJECTS.submissionSpam : SUBJECTS.submissionCreated, payload }),
    period: a.period,
    quota: a.form.monthly_quota,
    idempotency: a.idempotencyKey === undefined ? undefined : { key: a.idempotencyKey, expiresAt: new Date(a.now.getTime() + LIMITS.idempotencyMs) },
  });
}

/** The form (or its account) was deleted after ingest read it (it is cached briefly): as if it never existed. */
function deletedMeanwhile(err: unknown): never {
  if (isForeignKeyViolation(err)) throw problem('form-not-found', 'The form no longer exists');
  throw err;
}

import { authenticateKey, bearerToken, keyTypeOf, periodKey, problem, type Platform } from '@intake/shared';
import type { IngestForm } from '../read/form.repository';
import { findReplay, type Replay } from '../store/submission.repository';
import type { FormCache } from '../read/form-cache';
import type { IngestRateLimiter } from './rate-limit';
import { LIMITS } from '../read/limits';

export interface GateRequest {
  slug: string;
  ip: string;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  /** The browser's `Origin` header, else the origin of its `Referer`. */
  origin?: string;
}

export type GateResult = { form: IngestForm; period: string; now: Date; replay?: Replay };

/**
 * Everything decided before the body is read, in the spec's order (section 7): form exists,
 * is live, the submission key (if any) is valid and the form account's, the rate limit, then a
 * replayed idempotency key (answered without processing), then the monthly quota (as last seen:
 * the form is cached for FORM_CACHE_MS; the exact check is made when storing).
 */
export async function passGate(props: {
  platform: Platform;
  limiter: IngestRateLimiter;
  formCache: FormCache;
  request: GateRequest;
}): Promise<GateResult> {
  const { platform, limiter, request } = props;
  const now = platform.clock.now();
  const period = periodKey(now);
  if (request.slug.length > 200) throw problem('form-not-found', 'No form has this slug');
  const form = await props.formCache.get(request.slug, period);
  if (!form) throw problem('form-not-found', `No form has the slug "${request.slug}"`);
  if (form.status !== 'live')
    throw problem('form-not-live', `The form is ${form.status} and does not accept submissions`);
  checkOrigin(form, request.origin);
  await checkSubmissionKey(platform, request.authorization, form.account_id);
  await limiter.consume(form.id, request.ip);
  if (request.idempotencyKey !== undefined) {
    checkIdempotencyKey(request.idempotencyKey);
    const replay = await findReplay(platform.db, { formId: form.id, key: request.idempotencyKey, now });
    if (replay) return { form, period, now, replay };
  }
  if (form.used >= form.monthly_quota) throw quotaExceeded(form.monthly_quota);
  return { form, period, now };
}

export function quotaExceeded(limit: number) {
  return problem('quota-exceeded', 'The monthly submission quota of this form’s account is used up', { limit });
}

async function checkSubmissionKey(
  platform: Platform,
  authorization: string | undefined,
  accountId: string,
): Promise<void> {
  const token = bearerToken(authorization);
  if (token === undefined) return;
  if (keyTypeOf(token) !== 'submission')
    throw problem('invalid-key', 'Only a submission key (svc_sub_...) may be sent to a form');
  const principal = await authenticateKey(platform.db, token);
  if (principal.accountId !== accountId)
    throw problem('invalid-key', 'The submission key does not belong to this form’s account');
}

/**
 * A form with `allowed_origins` accepts browser posts only from those origins. Requests that carry
 * neither Origin nor Referer (servers, scripts) are not browser posts and pass: the list stops
 * other websites from embedding the form, it does not authenticate (submission keys do that).
 */
export function checkOrigin(form: Pick<IngestForm, 'allowed_origins'>, origin: string | undefined): void {
  if (!form.allowed_origins?.length || origin === undefined) return;
  const posted = normalizeOrigin(origin);
  if (!form.allowed_origins.some((allowed) => normalizeOrigin(allowed) === posted)) {
    throw problem('origin-not-allowed', `Posts from ${origin} are not accepted by this form`);
  }
}

/** `https://Example.com:443` and `https://example.com` are one origin. */
function normalizeOrigin(origin: string): string {
  try {
    return new URL(origin).origin;
  } catch {
    return origin;
  }
}

function checkIdempotencyKey(key: string): void {
  if (key.length === 0 || key.length > LIMITS.idempotencyKeyChars || !/^[\x20-\x7e]+$/.test(key)) {
    throw problem(
      'validation-failed',
      `Idempotency-Key must be 1 to ${LIMITS.idempotencyKeyChars} printable ASCII characters`,
      { errors: [{ field: 'header/idempotency-key', message: 'is not a valid key' }] },
    );
  }
}

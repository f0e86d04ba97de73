import { BatchQueue } from '@intake/shared/base';
import { periodKey, problem } from '@intake/shared/contracts';
import { authenticateKey, keyTypeOf } from '@intake/shared/auth';
import { bearerToken, clientKey } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { IngestForm } from '../read/form.repository';
import { findReplay, type Replay } from '../store/submission.repository';
import type { FormCache } from '../read/form-cache';
import { LIMITS } from '../read/limits';
import { RefusalCounter } from './refusals';

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
  await limiter.consume(form.id, request.ip, form.rate_limit ?? platform.config.RATE_LIMIT_POINTS, now);
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

// The rate limit: a step of the gate, per client and form.

type Redis = NonNullable<Platform['redis']>;

export interface IngestRateLimiter {
  /**
   * Takes one point for this IP on this form, whose limit is `points` a window; 429 rate-limited with Retry-After
   * when none is left (counted for the form's owner, at `now`).
   */
  consume(formId: string, ip: string, points: number, now: Date): Promise<void>;
  /** Writes the refusals counted and not yet written. */
  stop(): Promise<void>;
}

/** The most posts a window any form may allow: the limiter counts up to it, each form's own limit decides. */
const MOST_POINTS = 1_000_000;

/**
 * Per IP per form, the form's `rate_limit` (else RATE_LIMIT_POINTS) per RATE_LIMIT_WINDOW_SECONDS, counted in Redis so
 * every replica shares the count; each refusal is counted for the form's owner (RefusalCounter). When Redis is down an in-process limiter with the same budget takes
 * over, so posts keep being accepted (and still limited, per process); without REDIS_URL that
 * limiter is the only one. Posts of one IP and form that arrive together are counted in one call
 * (`takeTogether`).
 */
export function createRateLimiter(platform: Pick<Platform, 'redis' | 'config' | 'db' | 'logger'>): IngestRateLimiter {
  const { config, redis } = platform;
  const points = MOST_POINTS;
  const refusals = new RefusalCounter(platform.db, platform.logger);
  // Each form's limit, as it last said (at most one entry a form).
  const limits = new Map<string, number>();
  const duration = config.RATE_LIMIT_WINDOW_SECONDS;
  const inProcess = new RateLimiterMemory({ points, duration, keyPrefix: `${config.NATS_PREFIX}:ingest-rl-mem` });
  const limiter = redis
    ? new RateLimiterRedis({
        points,
        duration,
        storeClient: redis,
        keyPrefix: `${config.NATS_PREFIX}:ingest-rl`,
        rejectIfRedisNotReady: true,
        insuranceLimiter: inProcess,
      })
    : inProcess;
  // The posts of one key in the same turn of the event loop take their points in one call, and
  // the turn's calls leave in one write, at once (the client does not pipeline on its own).
  const takes = new BatchQueue<string, Taken>(
    async (keys) =>
      (
        await (redis
          ? inOneWrite(redis, () => takeTogether(limiter, keys, limitOf))
          : takeTogether(limiter, keys, limitOf))
      ).map((value) => ({
        status: 'fulfilled' as const,
        value,
      })),
    { maxGroup: 100, maxInFlight: Infinity, gatherTurn: true },
  );
  const limitOf = (key: string) => limits.get(key.slice(0, key.indexOf(':'))) ?? config.RATE_LIMIT_POINTS;
  return {
    async consume(formId, ip, formPoints, now) {
      limits.set(formId, formPoints);
      const taken = await takes.push(`${formId}:${clientKey(ip)}`);
      if (taken === undefined) return;
      if (typeof taken === 'object') throw taken.failed;
      refusals.add(formId, now);
      const seconds = Math.max(1, Math.ceil(taken / 1000));
      throw problem(
        'rate-limited',
        `Too many posts to this form from your address; try again in ${seconds} s`,
        {},
        { 'Retry-After': String(seconds) },
      );
    },
    stop: () => refusals.stop(),
  };
}

/** A post's answer: allowed (undefined), refused (the milliseconds until the window resets), or the limiter's failure. */
export type Taken = number | undefined | { failed: unknown };

/**
 * One `consume(key, n)` per distinct key for its n posts, then each post learns its place: the
 * i-th (from 0) of n is refused when the count after the call, less the n - i - 1 posts after it,
 * exceeds the budget. That is what n calls one after another would have answered (a refused
 * post's point is counted too), in one round trip: under a flood from one address, which is what
 * the limit is for, Redis gets one call per turn instead of one per post. A key whose call fails
 * fails only its own posts. (Refusals come from the count, not from a block: the limiters run
 * without `inMemoryBlockOnConsumed`, whose refusals carry no count.)
 */
export async function takeTogether(
  limiter: Pick<RateLimiterRedis | RateLimiterMemory, 'consume' | 'points'>,
  keys: string[],
  limitOf: (key: string) => number = () => limiter.points,
): Promise<Taken[]> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  const after = new Map<string, RateLimiterRes | { failed: unknown }>();
  await Promise.all(
    [...counts].map(async ([key, n]) => {
      try {
        after.set(key, await limiter.consume(key, n));
      } catch (err) {
        after.set(key, err instanceof RateLimiterRes ? err : { failed: err });
      }
    }),
  );
  const seen = new Map<string, number>();
  return keys.map((key) => {
    const res = after.get(key)!;
    if (!(res instanceof RateLimiterRes)) return res;
    const place = seen.get(key) ?? 0;
    seen.set(key, place + 1);
    const count = res.consumedPoints - counts.get(key)! + place + 1;
    return count > limitOf(key) ? res.msBeforeNext : undefined;
  });
}

/**
 * Runs `issue` with the Redis connection's socket corked: the commands it sends before returning
 * (`takeTogether` calls `consume` for every key before its first await) go out in one write when
 * it returns, as the client's auto-pipelining would send them, but in this turn of the event loop
 * instead of the next.
 */
export function inOneWrite<T>(redis: Pick<Redis, 'stream'>, issue: () => T): T {
  // Undefined before the client first connects.
  const socket = redis.stream as Redis['stream'] | undefined;
  socket?.cork();
  try {
    return issue();
  } finally {
    socket?.uncork();
  }
}

import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { problem, type Platform } from '@intake/shared';

export interface IngestRateLimiter {
  /** Takes one point for this IP on this form; 429 rate-limited with Retry-After when none is left. */
  consume(formId: string, ip: string): Promise<void>;
}

/**
 * Per IP per form, RATE_LIMIT_POINTS per RATE_LIMIT_WINDOW_SECONDS, counted in Redis so every
 * replica shares the count. When Redis is down an in-process limiter with the same budget takes
 * over, so posts keep being accepted (and still limited, per process).
 */
export function createRateLimiter(platform: Pick<Platform, 'redis' | 'config'>): IngestRateLimiter {
  const { config } = platform;
  const options = { points: config.RATE_LIMIT_POINTS, duration: config.RATE_LIMIT_WINDOW_SECONDS };
  const limiter = new RateLimiterRedis({
    ...options,
    storeClient: platform.redis,
    keyPrefix: `${config.NATS_PREFIX}:ingest-rl`,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ ...options, keyPrefix: `${config.NATS_PREFIX}:ingest-rl-mem` }),
  });
  return {
    async consume(formId, ip) {
      try {
        await limiter.consume(`${formId}:${ip}`);
      } catch (err) {
        if (err instanceof RateLimiterRes) {
          const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
          throw problem(
            'rate-limited',
            `Too many posts to this form from your address; try again in ${seconds} s`,
            {},
            { 'Retry-After': String(seconds) },
          );
        }
        throw err;
      }
    },
  };
}

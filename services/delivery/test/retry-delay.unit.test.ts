import { RETRY_JITTER, retryDelayMs } from '../src';

/** The spec's backoff: 1 s, 10 s, 1 min, 10 min, 1 h. */
const SCHEDULE = [1000, 10_000, 60_000, 600_000, 3_600_000];

describe('the wait before a retry', () => {
  it('is never shorter than the step the spec gives, and at most a tenth longer', () => {
    SCHEDULE.forEach((step, i) => {
      expect(retryDelayMs(SCHEDULE, i + 1, () => 0)).toBe(step);
      expect(retryDelayMs(SCHEDULE, i + 1, () => 0.999_999)).toBe(step + Math.floor(step * RETRY_JITTER * 0.999_999));
    });
  });

  it('spreads the retries of deliveries that failed together over the tenth after their step', () => {
    const waits = Array.from({ length: 1000 }, () => retryDelayMs(SCHEDULE, 3));
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(60_000);
    expect(Math.max(...waits)).toBeLessThan(66_000);
    // 1,000 deliveries over 6 s: a receiver coming back meets them over seconds, not in one.
    expect(new Set(waits.map((w) => Math.floor(w / 1000))).size).toBe(6);
  });

  it('repeats the last step of a schedule shorter than the ladder', () => {
    expect(retryDelayMs([500, 2000], 5, () => 0)).toBe(2000);
  });
});

/** A source of "now", injected so tests can move through months and retry schedules. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO-8601 UTC with milliseconds, e.g. 2026-11-21T04:22:11.000Z. */
export function toTimestamp(value: Date | string | number): string {
  return new Date(value).toISOString();
}

/** Start (inclusive) and end (exclusive) of the calendar month in UTC that contains `at`. */
export function monthOf(at: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { start, end };
}

/** The UTC month as the `YYYY-MM-01` date used as the period key of usage counters. */
export function periodKey(at: Date): string {
  return monthOf(at).start.toISOString().slice(0, 10);
}

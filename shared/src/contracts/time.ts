/** Time as Intake reads and writes it: the clock, timestamps, the months usage is counted in (ids are in `ids.ts`). */

/** A source of "now", injected so tests can move through months and retry schedules. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * ISO-8601 UTC with milliseconds, e.g. 2026-11-21T04:22:11.000Z: what `toISOString` gives, built
 * from the date's fields (V8's `toISOString` formats through `snprintf`, several times slower, and
 * ingest formats a few timestamps per post). Years outside 0–9999 take `toISOString`'s expanded
 * form; an invalid date throws its RangeError.
 */
export function toTimestamp(value: Date | string | number): string {
  const at = value instanceof Date ? value : new Date(value);
  const year = at.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return at.toISOString();
  return (
    `${pad(year, 4)}-${pad(at.getUTCMonth() + 1, 2)}-${pad(at.getUTCDate(), 2)}` +
    `T${pad(at.getUTCHours(), 2)}:${pad(at.getUTCMinutes(), 2)}:${pad(at.getUTCSeconds(), 2)}` +
    `.${pad(at.getUTCMilliseconds(), 3)}Z`
  );
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** Start (inclusive) and end (exclusive) of the calendar month in UTC that contains `at`. */
export function monthOf(at: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { start, end };
}

/** The UTC month as the `YYYY-MM-01` date used as the period key of usage counters. */
export function periodKey(at: Date): string {
  const year = at.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return monthOf(at).start.toISOString().slice(0, 10);
  return `${pad(year, 4)}-${pad(at.getUTCMonth() + 1, 2)}-01`;
}

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

/**
 * The canonical name of an IANA time zone as Intl knows it (`europe/paris` → `Europe/Paris`, `UTC`), or undefined when
 * `zone` names none. An offset (`+01:00`), which newer engines also accept, is not a zone: it ignores summer time.
 */
export function canonicalTimeZone(zone: string): string | undefined {
  if (zone.length > 64 || !/^[A-Za-z]/.test(zone)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

const readableFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * An instant as a person reads it, in `zone` and naming the zone, as the console shows times: `1 Dec 2026, 22:18:31
 * GMT`, `2 Dec 2026, 09:05:00 CET`. A zone Intl does not know (written by hand) reads as UTC.
 */
export function readableTime(at: Date, zone: string): string {
  const name = canonicalTimeZone(zone) ?? 'UTC';
  let format = readableFormats.get(name);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZone: name,
      timeZoneName: 'short',
    });
    readableFormats.set(name, format);
  }
  return format.format(at);
}

/**
 * The JSON Schema format `time-zone` (an IANA zone Intl knows, as `canonicalTimeZone`), registered with the ajv
 * instances that check bodies: a form's `time_zone` and a project's default of it.
 */
export const TIME_ZONE_FORMAT = {
  name: 'time-zone',
  validate: (value: string) => canonicalTimeZone(value) !== undefined,
} as const;

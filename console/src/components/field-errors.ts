import { ApiError } from '../api';

/** The API's schema messages (AJV's words) in plain words. */
const PLAIN: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^must match format "email"$/, () => 'is not an e-mail address'],
  [/^must match format "uri"$/, () => 'is not a full web address (such as https://example.com/…)'],
  [/^must match format "date-time"$/, () => 'is not a date and time'],
  [/^must match format "([^"]+)"$/, (m) => `is not a valid ${m[1]}`],
  [/^must match pattern/, () => 'has characters that are not allowed here'],
  [/^must NOT have more than (\d+) characters$/, (m) => `is too long (at most ${m[1]} characters)`],
  [/^must NOT have fewer than 1 characters$/, () => 'is empty'],
  [/^must NOT have fewer than (\d+) characters$/, (m) => `is too short (at least ${m[1]} characters)`],
  [/^must NOT have more than (\d+) items$/, (m) => `has too many entries (at most ${m[1]})`],
  [/^must NOT have fewer than (\d+) items$/, (m) => `needs at least ${m[1]}`],
  [/^must be >= (-?[\d.]+)$/, (m) => `must be at least ${m[1]}`],
  [/^must be <= (-?[\d.]+)$/, (m) => `must be at most ${m[1]}`],
  [/^must be > (-?[\d.]+)$/, (m) => `must be more than ${m[1]}`],
  [/^must be < (-?[\d.]+)$/, (m) => `must be less than ${m[1]}`],
  [/^must be integer$/, () => 'must be a whole number'],
  [/^must be number$/, () => 'must be a number'],
  [/^must be boolean$/, () => 'must be yes or no'],
  [/^must be string$/, () => 'must be text'],
  [/^must be (array|object|null)$/, () => 'is not the right kind of value'],
  [/^must be equal to one of the allowed values$/, () => 'is not one of the choices'],
  [/^must be equal to constant$/, () => 'is not one of the choices'],
  [
    /^must match exactly one schema in oneOf$|^must match a schema in anyOf$/,
    () => 'is not a value this setting takes',
  ],
  [/^must NOT have additional properties$/, () => 'has a setting this does not take'],
  [/^must NOT have duplicate items/, () => 'lists the same entry twice'],
  [/^must have required property '([^']+)'$/, (m) => `needs ${words(m[1] as string)}`],
];

/** Plain words for the API's schema messages, as a person reads them next to a field. */
function plainMessage(message: string): string {
  for (const [pattern, say] of PLAIN) {
    const m = pattern.exec(message);
    if (m) return say(m);
  }
  return message;
}

/** A field's name as a person reads it: `retention_days` is "retention days", `notification_template subject` too. */
function words(name: string): string {
  return name.replace(/[_/]+/g, ' ').trim();
}

/**
 * A problem's field errors, by the top-level name of the body field they belong to (`body/notify_emails/1` belongs to
 * `notify_emails`), in plain words; an entry of a list says which line it is. With `within`, those of that object of
 * the body, by their names in it (`body/destination/token` is `token` within `destination`).
 */
export function fieldErrors(error: unknown, within?: string): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const prefix = within === undefined ? ['body'] : ['body', within];
  const out: Record<string, string> = {};
  for (const e of error.errors) {
    const path = e.field.split('/');
    if (prefix.some((p, i) => path[i] !== p)) continue;
    const [name, index] = path.slice(prefix.length);
    if (!name) continue;
    const line = index !== undefined && /^\d+$/.test(index) ? `Line ${Number(index) + 1} ` : 'It ';
    const text = `${line}${plainMessage(e.message)}.`;
    out[name] = out[name] ? `${out[name]} ${text}` : text;
  }
  return out;
}

/** A problem's field errors that no field on the page shows, in plain words (for the message above the form). */
export function otherErrors(error: unknown, shown: string[]): string[] {
  if (!(error instanceof ApiError)) return [];
  return error.errors
    .filter((e) => !shown.includes(e.field.split('/')[1] ?? ''))
    .map((e) => {
      const field = words(e.field.replace(/^(body|query|path|header)\//, ''));
      const said = `${field ? `${field.charAt(0).toUpperCase()}${field.slice(1)} ` : ''}${plainMessage(e.message)}`;
      return said.charAt(0).toUpperCase() + said.slice(1);
    });
}

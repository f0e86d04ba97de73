import { ApiError } from '../api';

/** Plain words for the API's schema messages, as a person reads them next to a field. */
function plainMessage(message: string): string {
  const format = /^must match format "([^"]+)"$/.exec(message)?.[1];
  if (format === 'email') return 'is not an e-mail address';
  if (format === 'uri') return 'is not a full web address (such as https://example.com/…)';
  if (format) return `is not a valid ${format}`;
  if (/^must match pattern/.test(message)) return 'has characters that are not allowed here';
  const longest = /^must NOT have more than (\d+) characters$/.exec(message)?.[1];
  if (longest) return `is too long (at most ${longest} characters)`;
  if (/^must NOT have fewer than 1 characters$/.test(message)) return 'is empty';
  if (/^must NOT have more than (\d+) items$/.test(message)) return 'has too many entries';
  return message;
}

/**
 * A problem's field errors, by the top-level name of the body field they belong to (`body/notify_emails/1` belongs to
 * `notify_emails`), in plain words; an entry of a list says which line it is.
 */
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const out: Record<string, string> = {};
  for (const e of error.errors) {
    const [where, name, index] = e.field.split('/');
    if (where !== 'body' || !name) continue;
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
    .map((e) => `${e.field.replace(/^(body|query|path)\//, '').replace(/\//g, ' ')} ${plainMessage(e.message)}`);
}

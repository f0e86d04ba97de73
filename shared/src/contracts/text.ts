import type { FieldError } from './problems';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a client's string cannot be stored as text, or undefined when it can. Two classes are refused
 * wherever input enters (route validation and ingest's parsers):
 * - NUL (U+0000): Postgres `text` cannot hold it and `jsonb` refuses its `\u0000` escape;
 * - an unpaired UTF-16 surrogate: not Unicode at all; `jsonb` refuses its escape and UTF-8 encoding
 *   would silently turn it into U+FFFD, storing something the client did not send.
 * Every other character (other controls, bidi overrides, noncharacters) is storable text and is kept
 * as sent; presenting it safely is the reader's job (the console escapes, exports quote).
 */
export function unstorableText(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain NUL (U+0000)';
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode (it has an unpaired surrogate)';
  return undefined;
}

/** Every string in a parsed value (object keys included) that `unstorableText` refuses, named by its path. */
export function unstorableFields(value: unknown, location: string, out: FieldError[] = []): FieldError[] {
  if (typeof value === 'string') {
    const why = unstorableText(value);
    if (why) out.push({ field: location, message: why });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => unstorableFields(item, `${location}/${i}`, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const keyWhy = unstorableText(key);
      if (keyWhy) out.push({ field: `${location}/${safeName(key)}`, message: `has a name that ${keyWhy}` });
      else unstorableFields(item, `${location}/${key}`, out);
    }
  }
  return out;
}

/** A name that can be shown in a problem document (and its log line): NULs and lone surrogates replaced. */
export function safeName(name: string): string {
  return name.replaceAll('\u0000', '\\0').replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');
}

/**
 * One address a notification may take as its Reply-To (a `_replyto` control field, or the visitor's e-mail field):
 * no list, no display name, no space.
 */
export function isReplyAddress(value: string): boolean {
  return value.length <= 254 && /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/.test(value);
}

/**
 * An e-mail address as Intake compares and keeps people's addresses: trimmed and lower-cased. `trim` removes the
 * whitespace the index's `intake_subject_emails` removes (migration 018): tab, line breaks, no-break and Unicode spaces.
 */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

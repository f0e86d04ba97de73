import { isReplyAddress, type Directions } from '@intake/shared/contracts';
import type { IngestForm } from './form.repository';

/**
 * The control fields owners know from Formspree: directions to Intake, taken out of the stored payload like the
 * honeypot (docs/decisions/ingest.md#control-fields). `_subject` is the owner's notification's subject, `_replyto` its
 * Reply-To, `_next` where a browser goes after a success.
 */
export const CONTROL_FIELDS = { subject: '_subject', replyTo: '_replyto', next: '_next' } as const;

/** What the control fields of one post asked, each checked: `directions` for the notification, `next` for the answer. */
export interface ControlFields {
  directions: Directions;
  /** An absolute URL on one of the form's own origins, else undefined (the form's own answer stands). */
  next: string | undefined;
}

const SUBJECT_MAX = 200;

/**
 * Reads the control fields (the first non-empty value of each; they are removed from `grouped`): a subject is kept
 * to one line of at most 200 characters, a reply-to only when it is one address, a next URL only when it is http(s)
 * on an origin of the form's `allowed_origins` or on its `redirect_url`'s (a visitor's post never redirects a browser
 * to a site the owner did not name). What does not pass is dropped, never refused: the post itself is fine.
 */
export function takeControlFields(
  grouped: Map<string, string[]>,
  form: Pick<IngestForm, 'allowed_origins' | 'redirect_url'>,
): ControlFields {
  const first = (name: string) => {
    const values = grouped.get(name);
    grouped.delete(name);
    return values?.map((v) => v.trim()).find((v) => v !== '');
  };
  const subject = first(CONTROL_FIELDS.subject)?.replace(/\s+/g, ' ').slice(0, SUBJECT_MAX);
  const replyTo = first(CONTROL_FIELDS.replyTo);
  const next = first(CONTROL_FIELDS.next);
  const directions: Directions = {};
  if (subject) directions.subject = subject;
  if (replyTo && isReplyAddress(replyTo)) directions.reply_to = replyTo;
  return { directions, next: next && onOwnOrigin(next, form) ? new URL(next).href : undefined };
}

function onOwnOrigin(url: string, form: Pick<IngestForm, 'allowed_origins' | 'redirect_url'>): boolean {
  const target = parsed(url);
  if (!target || (target.protocol !== 'https:' && target.protocol !== 'http:')) return false;
  const own = [...form.allowed_origins, ...(form.redirect_url ? [form.redirect_url] : [])];
  return own.some((allowed) => parsed(allowed)?.origin === target.origin);
}

function parsed(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

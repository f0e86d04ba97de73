/** E-mail addresses as Intake takes and compares them. (What text Postgres can store is in `base/db.ts`.) */

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

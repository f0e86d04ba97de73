/**
 * The one vocabulary of `notifications.status` (a CHECK constraint holds the table to it), for
 * submission e-mails (delivery) and quota warnings (usage) alike:
 * - `pending`: not sent yet, to be (re)tried;
 * - `sending`: claimed by a sender that has not recorded the outcome yet;
 * - `sent`, `failed` (given up after the last attempt), `skipped` (superseded, never to be sent).
 */
export const NOTIFICATION_STATUSES = ['pending', 'sending', 'sent', 'failed', 'skipped'] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/** Providers that ignore dots in the local part (and their other domains, which are the same mailboxes). */
const DOTLESS_DOMAINS: Record<string, string> = { 'gmail.com': 'gmail.com', 'googlemail.com': 'gmail.com' };

/**
 * The mailbox an address delivers to, as far as it can be told from the address: lower-cased, without a
 * `+tag` (sub-addressing, which Gmail, Outlook, iCloud, Fastmail and Proton all deliver to the same mailbox), and for
 * Gmail without dots in the local part and with `googlemail.com` as `gmail.com`. The autoresponse limit counts
 * mailboxes, so none of these spellings multiplies the mails one person gets.
 */
export function mailboxOf(address: string): string {
  const lower = address.trim().toLowerCase();
  const at = lower.lastIndexOf('@');
  if (at <= 0) return lower;
  const domain = lower.slice(at + 1);
  let local = lower.slice(0, at);
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  const dotless = DOTLESS_DOMAINS[domain];
  return dotless ? `${local.replaceAll('.', '')}@${dotless}` : `${local}@${domain}`;
}

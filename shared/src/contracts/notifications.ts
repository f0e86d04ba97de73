/**
 * The one vocabulary of `notifications.status` (a CHECK constraint holds the table to it), for
 * submission e-mails (delivery) and quota warnings (usage) alike:
 * - `pending`: not sent yet, to be (re)tried;
 * - `sending`: claimed by a sender that has not recorded the outcome yet;
 * - `sent`, `failed` (given up after the last attempt), `skipped` (superseded, never to be sent).
 */
export const NOTIFICATION_STATUSES = ['pending', 'sending', 'sent', 'failed', 'skipped'] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

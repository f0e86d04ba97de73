import type { Knex } from 'knex';
import { type Db, type Logger, type Mailer } from '@intake/shared/base';
import { monthOf } from '@intake/shared/contracts';
import { recordNotification } from '@intake/shared/telemetry';
import { findAccountQuota, findCounters } from '../repositories/usage.repository';
import {
  insertNotificationOnce,
  claimQuotaWarnings,
  markNotificationFailed,
  markNotificationSent,
  type QuotaNotificationRow,
} from '../repositories/notification.repository';

/** Percentages of the monthly quota at which the account's contact address is warned, once each per month. */
export const QUOTA_THRESHOLDS = [80, 100] as const;
export type QuotaThreshold = (typeof QUOTA_THRESHOLDS)[number];

/** After this many failed sends a warning is left as `failed`. */
export const MAX_WARNING_ATTEMPTS = 5;

/** The thresholds that `used` has reached for a quota of `limit` (none for a zero quota, which accepts nothing). */
export function reachedThresholds(used: number, limit: number): QuotaThreshold[] {
  if (limit <= 0) return [];
  return QUOTA_THRESHOLDS.filter((t) => used * 100 >= limit * t);
}

export function quotaWarningKey(threshold: QuotaThreshold, accountId: string, period: string): string {
  return `quota-${threshold}:${accountId}:${period}`;
}

function parseQuotaWarningKey(key: string): { threshold: QuotaThreshold; accountId: string; period: string } {
  const [kind, accountId, period] = key.split(':') as [string, string, string];
  return { threshold: Number(kind.replace('quota-', '')) as QuotaThreshold, accountId, period };
}

/**
 * Inside the transaction that counted a received submission: queues a warning for each threshold
 * that `used` (written by ingest, so already including this submission; read by the counting
 * statement) has reached of `limit` and that was not queued yet this period, to `contactEmail`.
 * Returns the ids of the new warnings, to be sent after commit.
 */
export async function queueQuotaWarnings(props: {
  trx: Knex.Transaction;
  accountId: string;
  period: string;
  now: Date;
  contactEmail: string;
  limit: number;
  used: number;
}): Promise<string[]> {
  const { trx, accountId, period, now } = props;
  const ids: string[] = [];
  // Highest first: when one submission crosses both thresholds (a tiny quota), only the 100% mail goes out.
  for (const threshold of reachedThresholds(props.used, props.limit).reverse()) {
    const status = ids.length ? 'skipped' : 'pending';
    const id = await insertNotificationOnce(trx, {
      accountId,
      kind: `quota-${threshold}`,
      dedupKey: quotaWarningKey(threshold, accountId, period),
      recipients: [props.contactEmail],
      status,
      now,
    });
    if (id && status === 'pending') ids.push(id);
    if (id === undefined && !ids.length) break; // this one was already queued, so any lower one was too
  }
  return ids;
}

function monthName(period: string): string {
  return new Date(`${period}T00:00:00.000Z`).toLocaleString('en-GB', {
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  });
}

async function composeWarning(
  db: Knex,
  row: QuotaNotificationRow,
  publicBaseUrl: string,
): Promise<{ subject: string; text: string }> {
  const { threshold, accountId, period } = parseQuotaWarningKey(row.dedup_key);
  const account = await findAccountQuota(db, accountId);
  const { used } = await findCounters(db, accountId, period);
  const limit = account?.limit ?? 0;
  const month = monthName(period);
  const resets = monthOf(new Date(`${period}T00:00:00.000Z`))
    .end.toISOString()
    .slice(0, 10);
  const subject =
    threshold >= 100
      ? `Intake: monthly submission quota reached (${month})`
      : `Intake: ${threshold}% of your monthly submission quota used (${month})`;
  const text = [
    `Your Intake account${account ? ` (${account.plan_name} plan)` : ''} has received ${used} of its ` +
      `${limit} submissions for ${month} (UTC).`,
    threshold >= 100
      ? `New submissions are refused with 402 quota-exceeded until the quota resets on ${resets} 00:00 UTC.`
      : `When all ${limit} are used, new submissions are refused with 402 quota-exceeded until the quota resets on ${resets} 00:00 UTC.`,
    'To keep accepting submissions, move to a larger plan or ask your operator to raise the quota.',
    '',
    `Current usage: GET ${publicBaseUrl}/v1/usage`,
  ].join('\n');
  return { subject, text };
}

/** A warning claimed longer ago than this by a sender that never recorded the outcome (it stopped) is claimed again. */
export const SENDING_LEASE_MS = 10 * 60_000;

/**
 * Sends pending quota warnings (all of them, or only `ids`). A short transaction claims them
 * (`sending`, the attempt counted, rows locked SKIP LOCKED so several replicas never claim the same
 * one) and composes each mail; only after it has committed are the mails sent, each outcome then
 * recorded on its own (`sent`, or back to `pending` for the next run until MAX_WARNING_ATTEMPTS,
 * then `failed`). A claim that fails to commit sends nothing; a sender that stops between sending
 * and recording leaves the row `sending`, claimed again after SENDING_LEASE_MS (at least once,
 * never in a loop). Returns how many were sent.
 */
export async function sendQuotaWarnings(props: {
  db: Db;
  mailer: Mailer;
  logger: Logger;
  publicBaseUrl: string;
  now: () => Date;
  ids?: string[];
  limit?: number;
}): Promise<number> {
  const { db, mailer, logger } = props;
  if (props.ids && props.ids.length === 0) return 0;
  const now = props.now();
  const claimed = await db.transaction(async (trx) => {
    const rows = await claimQuotaWarnings(trx, {
      ids: props.ids,
      limit: props.limit ?? 20,
      now,
      staleBefore: new Date(now.getTime() - SENDING_LEASE_MS),
    });
    const out: { row: QuotaNotificationRow; mail: { subject: string; text: string } }[] = [];
    for (const row of rows) out.push({ row, mail: await composeWarning(trx, row, props.publicBaseUrl) });
    return out;
  });
  let sent = 0;
  for (const { row, mail } of claimed) {
    const attempt = row.attempt_count + 1;
    try {
      await mailer.send({ to: row.recipients, ...mail });
      recordNotification({ outcome: 'sent' });
      sent++;
    } catch (err) {
      recordNotification({ outcome: 'failed' });
      const giveUp = attempt >= MAX_WARNING_ATTEMPTS;
      logger.warn({ err, notification: row.id, attempt, giveUp }, 'quota warning could not be sent');
      await markNotificationFailed(db, row.id, String((err as Error).message ?? err), giveUp);
      continue;
    }
    await markNotificationSent(db, row.id, props.now());
  }
  return sent;
}

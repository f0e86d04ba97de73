import type { Knex } from 'knex';

/** One (account, form, day) row's increments, or one (account, month) row's. */
export interface DailyDelta {
  accountId: string;
  formId: string;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  received: number;
  spam: number;
  fileBytes: number;
}

export interface MonthlyDelta {
  accountId: string;
  /** `YYYY-MM-01`. */
  period: string;
  spam: number;
  fileBytes: number;
}

/** Claims events for a consumer in one statement; returns the ids not processed before (the others are redeliveries or republishes). */
export async function claimEvents(trx: Knex.Transaction, consumer: string, eventIds: string[]): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set();
  const { rows } = await trx.raw<{ rows: { event_id: string }[] }>(
    `INSERT INTO processed_events (consumer, event_id) SELECT ?, e FROM unnest(?::text[]) AS e
     ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id`,
    [consumer, eventIds],
  );
  return new Set(rows.map((r) => r.event_id));
}

/**
 * Adds the increments in two statements (one per table), one row per key, in key order so that
 * concurrent batches lock rows in the same order. Never touches `usage_counters.used` (ingest
 * owns it); a month whose spam and file bytes do not change is not written at all, so counting
 * takes no lock on the row ingest updates for every group of posts.
 */
export async function addUsageDeltas(
  trx: Knex.Transaction,
  daily: DailyDelta[],
  monthly: MonthlyDelta[],
): Promise<void> {
  const days = [...daily].sort((a, b) =>
    a.accountId === b.accountId
      ? a.formId === b.formId
        ? a.day.localeCompare(b.day)
        : a.formId.localeCompare(b.formId)
      : a.accountId.localeCompare(b.accountId),
  );
  if (days.length)
    await trx.raw(
      `INSERT INTO usage_daily AS u (account_id, form_id, day, received, spam, file_bytes)
       SELECT * FROM unnest(?::text[], ?::text[], ?::date[], ?::int[], ?::int[], ?::bigint[])
       ON CONFLICT (account_id, form_id, day) DO UPDATE
         SET received = u.received + excluded.received, spam = u.spam + excluded.spam, file_bytes = u.file_bytes + excluded.file_bytes`,
      [
        days.map((d) => d.accountId),
        days.map((d) => d.formId),
        days.map((d) => d.day),
        days.map((d) => d.received),
        days.map((d) => d.spam),
        days.map((d) => d.fileBytes),
      ],
    );
  const months = monthly
    .filter((m) => m.spam !== 0 || m.fileBytes !== 0)
    .sort((a, b) =>
      a.accountId === b.accountId ? a.period.localeCompare(b.period) : a.accountId.localeCompare(b.accountId),
    );
  if (months.length)
    await trx.raw(
      `INSERT INTO usage_counters AS u (account_id, period, used, spam, file_bytes)
       SELECT a, p, 0, s, b FROM unnest(?::text[], ?::date[], ?::int[], ?::bigint[]) AS t(a, p, s, b)
       ON CONFLICT (account_id, period) DO UPDATE SET spam = u.spam + excluded.spam, file_bytes = u.file_bytes + excluded.file_bytes`,
      [
        months.map((m) => m.accountId),
        months.map((m) => m.period),
        months.map((m) => m.spam),
        months.map((m) => m.fileBytes),
      ],
    );
}

import type { Knex } from 'knex';
import { ACCOUNT_QUOTA_SQL } from '@intake/shared/schema';

/** One event as counted: its day and month, and what it adds. */
export interface EventCount {
  eventId: string;
  accountId: string;
  formId: string;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  /** `YYYY-MM-01`. */
  period: string;
  received: number;
  spam: number;
  fileBytes: number;
}

/** An account with a contact address that received posts counted in the current month: what its warnings need. */
export interface WarnableAccount {
  accountId: string;
  contactEmail: string;
  limit: number;
  used: number;
}

/**
 * The statement of `countEvents`. Claims the events in processed_events (the ones counted before
 * are redeliveries or republishes), adds the new ones per (account, form, day) and per (account,
 * month), one row per key in key order so that concurrent batches lock rows in the same order, and
 * never touches `usage_counters.used` (ingest owns it); a month whose spam and file bytes do not
 * change is not written at all, so counting takes no lock on the row ingest updates for every
 * group of posts. It also returns, for the accounts with a contact address that received posts
 * counted in the current month (the third binding), their quota and `used`, for the quota warnings.
 */
const COUNT_EVENTS = `WITH ev AS MATERIALIZED (
       SELECT * FROM json_to_recordset(?::json) AS e(event_id text, account_id text, form_id text, day date,
         period date, received int, spam int, file_bytes bigint)),
     claimed AS (
       INSERT INTO processed_events (consumer, event_id) SELECT DISTINCT ?::text, event_id FROM ev
       ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id),
     fresh AS MATERIALIZED (
       SELECT DISTINCT ON (ev.event_id) ev.* FROM ev JOIN claimed USING (event_id) ORDER BY ev.event_id),
     daily AS (
       INSERT INTO usage_daily AS u (account_id, form_id, day, received, spam, file_bytes)
       SELECT account_id, form_id, day, sum(received), sum(spam), sum(file_bytes) FROM fresh
       GROUP BY account_id, form_id, day ORDER BY account_id, form_id, day
       ON CONFLICT (account_id, form_id, day) DO UPDATE
         SET received = u.received + excluded.received, spam = u.spam + excluded.spam,
           file_bytes = u.file_bytes + excluded.file_bytes),
     -- FOR SHARE: a form moving to another project (management moves its usage along) waits for this batch, or this
     -- batch for the move, so each count lands in the project the form is in when it commits.
     form_projects AS (
       SELECT id, project_id FROM forms WHERE id IN (SELECT form_id FROM fresh) ORDER BY id FOR SHARE),
     by_project AS (
       INSERT INTO usage_daily_projects AS u (account_id, project_id, day, received, spam)
       SELECT fresh.account_id, fp.project_id, fresh.day, sum(fresh.received), sum(fresh.spam)
       FROM fresh JOIN form_projects fp ON fp.id = fresh.form_id
       GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
       ON CONFLICT (account_id, project_id, day) DO UPDATE
         SET received = u.received + excluded.received, spam = u.spam + excluded.spam),
     monthly AS (
       INSERT INTO usage_counters AS u (account_id, period, used, spam, file_bytes)
       SELECT account_id, period, 0, sum(spam), sum(file_bytes) FROM fresh
       GROUP BY account_id, period HAVING sum(spam) <> 0 OR sum(file_bytes) <> 0 ORDER BY account_id, period
       ON CONFLICT (account_id, period) DO UPDATE
         SET spam = u.spam + excluded.spam, file_bytes = u.file_bytes + excluded.file_bytes)
     SELECT event_id AS id, NULL::text AS contact_email, NULL::int AS quota, NULL::int AS used FROM claimed
     UNION ALL
     SELECT accounts.id, accounts.contact_email, ${ACCOUNT_QUOTA_SQL}, coalesce(c.used, 0)
     FROM accounts JOIN plans ON plans.id = accounts.plan_id
       LEFT JOIN usage_counters c ON c.account_id = accounts.id AND c.period = ?::date
     WHERE accounts.contact_email IS NOT NULL
       AND accounts.id IN (SELECT account_id FROM fresh WHERE received > 0 AND period = ?::date)`;

/**
 * Counts a batch of events in one statement (COUNT_EVENTS), each exactly once: returns the ids
 * counted now (the others had been before) and the accounts whose quota warnings to check.
 * Run it in the transaction that also queues the warnings, so that both commit together.
 */
export async function countEvents(
  trx: Knex.Transaction,
  consumer: string,
  events: EventCount[],
  currentPeriod: string,
): Promise<{ fresh: Set<string>; warnable: WarnableAccount[] }> {
  const rows = events.map((e) => ({
    event_id: e.eventId,
    account_id: e.accountId,
    form_id: e.formId,
    day: e.day,
    period: e.period,
    received: e.received,
    spam: e.spam,
    file_bytes: e.fileBytes,
  }));
  const { rows: found } = await trx.raw<{
    rows: { id: string; contact_email: string | null; quota: number | null; used: number | null }[];
  }>(COUNT_EVENTS, [JSON.stringify(rows), consumer, currentPeriod, currentPeriod]);
  const fresh = new Set<string>();
  const warnable: WarnableAccount[] = [];
  for (const r of found) {
    if (r.contact_email === null) fresh.add(r.id);
    else warnable.push({ accountId: r.id, contactEmail: r.contact_email, limit: r.quota ?? 0, used: r.used ?? 0 });
  }
  return { fresh, warnable: warnable.sort((a, b) => a.accountId.localeCompare(b.accountId)) };
}

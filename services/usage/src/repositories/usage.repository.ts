import type { Knex } from 'knex';
import { ACCOUNT_QUOTA_SQL, accountWithPlan, type Queryable } from '@intake/shared';

export interface UsageDelta {
  accountId: string;
  formId: string;
  /** `YYYY-MM-DD` (UTC) of the submission. */
  day: string;
  /** `YYYY-MM-01`, the period key. */
  period: string;
  received: number;
  spam: number;
  fileBytes: number;
}

export interface AccountQuota {
  account_id: string;
  plan_id: string;
  plan_name: string;
  limit: number;
  contact_email: string | null;
}

export interface CounterRow {
  used: number;
  spam: number;
  file_bytes: number;
}

export interface BreakdownRow {
  received: number;
  spam: number;
  file_bytes: number;
}

// Knex queries over usage_counters, usage_daily and processed_events; always scoped by account.

/** Claims an event for a consumer; false when it was already processed (a redelivery or a republish). */
export async function claimEvent(trx: Knex.Transaction, consumer: string, eventId: string): Promise<boolean> {
  const rows = await trx('processed_events')
    .insert({ consumer, event_id: eventId })
    .onConflict(['consumer', 'event_id'])
    .ignore()
    .returning('event_id');
  return rows.length === 1;
}

/** Adds to the per-form per-day row and to the month's spam and file bytes. Never touches `used` (ingest owns it). */
export async function addUsage(trx: Knex.Transaction, d: UsageDelta): Promise<void> {
  await trx('usage_daily')
    .insert({
      account_id: d.accountId,
      form_id: d.formId,
      day: d.day,
      received: d.received,
      spam: d.spam,
      file_bytes: d.fileBytes,
    })
    .onConflict(['account_id', 'form_id', 'day'])
    .merge({
      received: trx.raw('usage_daily.received + ?', [d.received]),
      spam: trx.raw('usage_daily.spam + ?', [d.spam]),
      file_bytes: trx.raw('usage_daily.file_bytes + ?', [d.fileBytes]),
    });
  await trx('usage_counters')
    .insert({ account_id: d.accountId, period: d.period, used: 0, spam: d.spam, file_bytes: d.fileBytes })
    .onConflict(['account_id', 'period'])
    .merge({
      spam: trx.raw('usage_counters.spam + ?', [d.spam]),
      file_bytes: trx.raw('usage_counters.file_bytes + ?', [d.fileBytes]),
    });
}

export async function findAccountQuota(db: Queryable, accountId: string): Promise<AccountQuota | undefined> {
  return accountWithPlan(db, accountId).first(
    'accounts.id as account_id',
    'plans.id as plan_id',
    'plans.name as plan_name',
    db.raw(`${ACCOUNT_QUOTA_SQL} as "limit"`),
    'accounts.contact_email',
  );
}

export async function findCounters(db: Queryable, accountId: string, period: string): Promise<CounterRow> {
  const row = await db('usage_counters').where({ account_id: accountId, period }).first('used', 'spam', 'file_bytes');
  return { used: row?.used ?? 0, spam: row?.spam ?? 0, file_bytes: row?.file_bytes ?? 0 };
}

/** Per-form totals over [from, to) days, with the form's current name and slug (null once the form is deleted). */
export async function findUsageByForm(
  db: Queryable,
  accountId: string,
  from: string,
  to: string,
): Promise<(BreakdownRow & { form_id: string; name: string | null; slug: string | null })[]> {
  const rows = await db('usage_daily as u')
    .leftJoin('forms as f', (join) => {
      join.on('f.id', '=', 'u.form_id').andOn('f.account_id', '=', 'u.account_id');
    })
    .where('u.account_id', accountId)
    .andWhere('u.day', '>=', from)
    .andWhere('u.day', '<', to)
    .groupBy('u.form_id', 'f.name', 'f.slug')
    .orderBy('u.form_id')
    .select(
      'u.form_id',
      'f.name',
      'f.slug',
      db.raw('sum(u.received)::int as received'),
      db.raw('sum(u.spam)::int as spam'),
      db.raw('sum(u.file_bytes)::bigint as file_bytes'),
    );
  return rows;
}

/** Per-day totals over [from, to) days, keyed `YYYY-MM-DD`. */
export async function findUsageByDay(
  db: Queryable,
  accountId: string,
  from: string,
  to: string,
): Promise<Map<string, BreakdownRow>> {
  const rows: (BreakdownRow & { day: string })[] = await db('usage_daily')
    .where('account_id', accountId)
    .andWhere('day', '>=', from)
    .andWhere('day', '<', to)
    .groupBy('day')
    .select(
      db.raw(`to_char(day, 'YYYY-MM-DD') as day`),
      db.raw('sum(received)::int as received'),
      db.raw('sum(spam)::int as spam'),
      db.raw('sum(file_bytes)::bigint as file_bytes'),
    );
  return new Map(rows.map((r) => [r.day, { received: r.received, spam: r.spam, file_bytes: r.file_bytes }]));
}

/** Bytes of every file the account stores now (deleted submissions take their files with them). */
export async function sumStoredFileBytes(db: Queryable, accountId: string): Promise<number> {
  const row = await db('submission_files')
    .where({ account_id: accountId })
    .first(db.raw('coalesce(sum(size), 0)::bigint as bytes'));
  return Number(row?.bytes ?? 0);
}

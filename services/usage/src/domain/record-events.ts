import { periodKey, type Db, type SubmissionEvent } from '@intake/shared';
import {
  addUsageDeltas,
  claimEvents,
  type DailyDelta,
  type MonthlyDelta,
} from '../repositories/usage-batch.repository';
import { queueQuotaWarnings } from './quota-warnings';
import { USAGE_CONSUMER } from './record-event';

/**
 * Counts the events that arrived together in ONE transaction, each exactly once (the same rules
 * as `recordSubmissionEvent`): one statement claims them all in processed_events, the
 * increments are summed per (account, form, day) and per (account, month) and written in one
 * statement per table, and the quota warnings are checked once per account with received posts
 * in the current month. Returns the event ids that had been counted before, and the warnings
 * queued, to be sent after commit. Any error rolls the whole batch back.
 */
export async function recordSubmissionEvents(props: {
  db: Db;
  events: SubmissionEvent[];
  now: Date;
  consumer?: string;
}): Promise<{ duplicates: Set<string>; warningIds: string[] }> {
  const { db, events, now } = props;
  return db.transaction(async (trx) => {
    const ids = [...new Set(events.map((e) => e.event_id))];
    const fresh = await claimEvents(trx, props.consumer ?? USAGE_CONSUMER, ids);
    const daily = new Map<string, DailyDelta>();
    const monthly = new Map<string, MonthlyDelta>();
    const warnAccounts = new Set<string>();
    const currentPeriod = periodKey(now);
    const counted = new Set<string>();
    for (const event of events) {
      // A batch may hold one event twice (a redelivery next to its original): count it once.
      if (!fresh.has(event.event_id) || counted.has(event.event_id)) continue;
      counted.add(event.event_id);
      const at = new Date(event.received_at);
      const period = periodKey(at);
      const day = at.toISOString().slice(0, 10);
      const spam = event.status === 'spam' ? 1 : 0;
      const fileBytes = spam ? 0 : event.file_bytes;
      const dKey = `${event.account_id} ${event.form_id} ${day}`;
      const d = daily.get(dKey) ?? {
        accountId: event.account_id,
        formId: event.form_id,
        day,
        received: 0,
        spam: 0,
        fileBytes: 0,
      };
      d.received += 1 - spam;
      d.spam += spam;
      d.fileBytes += fileBytes;
      daily.set(dKey, d);
      const mKey = `${event.account_id} ${period}`;
      const m = monthly.get(mKey) ?? { accountId: event.account_id, period, spam: 0, fileBytes: 0 };
      m.spam += spam;
      m.fileBytes += fileBytes;
      monthly.set(mKey, m);
      if (!spam && period === currentPeriod) warnAccounts.add(event.account_id);
    }
    await addUsageDeltas(trx, [...daily.values()], [...monthly.values()]);
    const warningIds: string[] = [];
    for (const accountId of [...warnAccounts].sort())
      warningIds.push(...(await queueQuotaWarnings({ trx, accountId, period: currentPeriod, now })));
    return { duplicates: new Set(ids.filter((id) => !fresh.has(id))), warningIds };
  });
}

import { type Db } from '@intake/shared/base';
import { periodKey, type SubmissionEvent } from '@intake/shared/contracts';
import { countEvents } from '../repositories/usage-batch.repository';
import { queueQuotaWarnings } from './quota-warnings';

/** The usage service's durable JetStream consumer, and the name its processed events are recorded under (processed_events.consumer). */
export const USAGE_CONSUMER = 'usage';

/**
 * Counts the events that arrived together in ONE transaction, each exactly once: one statement
 * claims them all in processed_events and adds the new ones per (account, form, day) and per
 * (account, month) (`countEvents`), and the quota warnings of the accounts with received posts in
 * the current month are queued in the same transaction. The submission's own UTC day and month
 * decide where it counts, so a late event lands in the right month and a new month starts from
 * zero with no job at midnight; a late event of a past month warns no one. Returns the event ids
 * that had been counted before, and the warnings queued, to be sent after commit. Any error rolls
 * the whole batch back.
 */
export async function recordSubmissionEvents(props: {
  db: Db;
  events: SubmissionEvent[];
  now: Date;
  consumer?: string;
}): Promise<{ duplicates: Set<string>; warningIds: string[] }> {
  const { db, events, now } = props;
  const currentPeriod = periodKey(now);
  const counts = events.map((event) => {
    const at = new Date(event.received_at);
    const spam = event.status === 'spam' ? 1 : 0;
    return {
      eventId: event.event_id,
      accountId: event.account_id,
      formId: event.form_id,
      day: at.toISOString().slice(0, 10),
      period: periodKey(at),
      received: 1 - spam,
      spam,
      fileBytes: spam ? 0 : event.file_bytes,
    };
  });
  return db.transaction(async (trx) => {
    const { fresh, warnable } = await countEvents(trx, props.consumer ?? USAGE_CONSUMER, counts, currentPeriod);
    const warningIds: string[] = [];
    for (const account of warnable)
      warningIds.push(...(await queueQuotaWarnings({ trx, ...account, period: currentPeriod, now })));
    const ids = new Set(events.map((e) => e.event_id));
    return { duplicates: new Set([...ids].filter((id) => !fresh.has(id))), warningIds };
  });
}

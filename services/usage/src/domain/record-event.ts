import { periodKey, type Db, type SubmissionEvent } from '@intake/shared';
import { addUsage, claimEvent } from '../repositories/usage.repository';
import { queueQuotaWarnings } from './quota-warnings';

/** The usage service's durable JetStream consumer, and the name its processed events are recorded under (processed_events.consumer). */
export const USAGE_CONSUMER = 'usage';

export interface RecordOutcome {
  /** True when the event had been counted before (a redelivery or a republished event): nothing changed. */
  duplicate: boolean;
  /** Quota warnings queued by this event, to be sent after commit. */
  warningIds: string[];
}

/**
 * Counts one submission event, exactly once: the processed_events claim and the counters are
 * written in one transaction. The submission's own UTC day and month decide where it counts, so a
 * late event lands in the right month and a new month starts from zero with no job at midnight.
 * `usage_counters.used` is not touched: ingest counts it in the transaction that stores the submission.
 * Quota warnings are only queued for the current month (`now`): a late event of a past month warns no one.
 */
export async function recordSubmissionEvent(props: {
  db: Db;
  event: SubmissionEvent;
  now: Date;
  consumer?: string;
}): Promise<RecordOutcome> {
  const { db, event, now } = props;
  return db.transaction(async (trx) => {
    if (!(await claimEvent(trx, props.consumer ?? USAGE_CONSUMER, event.event_id)))
      return { duplicate: true, warningIds: [] };
    const at = new Date(event.received_at);
    const period = periodKey(at);
    const spam = event.status === 'spam';
    await addUsage(trx, {
      accountId: event.account_id,
      formId: event.form_id,
      day: at.toISOString().slice(0, 10),
      period,
      received: spam ? 0 : 1,
      spam: spam ? 1 : 0,
      fileBytes: spam ? 0 : event.file_bytes,
    });
    const warningIds =
      !spam && period === periodKey(now)
        ? await queueQuotaWarnings({ trx, accountId: event.account_id, period, now })
        : [];
    return { duplicate: false, warningIds };
  });
}

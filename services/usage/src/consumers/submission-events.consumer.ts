import { AckPolicy, DeliverPolicy, nanos } from 'nats';
import { createMailer, isForeignKeyViolation } from '@intake/shared/base';
import { checkSubmissionEvent, type SubmissionEvent } from '@intake/shared/contracts';
import { ACK, ensureConsumer, runConsumer, type Delivered, type Outcome } from '@intake/shared/messaging';
import { type Platform, type Worker } from '@intake/shared/runtime';
import { recordSubmissionEvents, USAGE_CONSUMER } from '../domain/record-event';
import { sendQuotaWarnings } from '../domain/quota-warnings';

export interface UsageConsumerOptions {
  /** How long a delivered message may stay unacknowledged before JetStream redelivers it. */
  ackWaitMs?: number;
  /** The most events held at once (default 256); those that arrive together are counted in one transaction. */
  concurrency?: number;
}

/** The most events counted in one transaction. */
const MAX_BATCH = 128;

/** A submission event that can be counted, or why not. */
function check(data: unknown): SubmissionEvent | { drop: string } {
  const checked = checkSubmissionEvent(data);
  if (!checked.ok) return { drop: `not a submission event: ${checked.error}` };
  if (Number.isNaN(new Date(checked.event.received_at).getTime()))
    return { drop: `received_at "${checked.event.received_at}" is not a timestamp` };
  return checked.event;
}

/** The durable consumer over every submission event (`submission.created` and `submission.spam`). */
export async function ensureUsageConsumer(platform: Platform, options: UsageConsumerOptions = {}): Promise<void> {
  const { nats } = platform;
  await ensureConsumer(nats, nats.names.eventsStream, {
    durable_name: USAGE_CONSUMER,
    filter_subject: nats.names.subject('submission.>'),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(options.ackWaitMs ?? 30_000),
    // Counting must never give up on a transient failure: redeliver until it is counted.
    max_deliver: -1,
    max_ack_pending: 1000,
  });
}

/**
 * Parse -> count (idempotent) -> ack; quota warnings queued by the count are mailed after commit.
 * The events that arrive together are counted in one transaction; when that fails (an account
 * deleted meanwhile, say), the consumer hands each over again alone, and an event whose account
 * (or plan) is gone is dropped: it can never be counted.
 */
export async function startUsageConsumer(
  platform: Platform,
  mailer: ReturnType<typeof createMailer>,
  options: UsageConsumerOptions = {},
): Promise<Worker> {
  const { logger, nats } = platform;
  await ensureUsageConsumer(platform, options);
  return runConsumer({
    nats,
    stream: nats.names.eventsStream,
    durable: USAGE_CONSUMER,
    logger,
    concurrency: options.concurrency ?? 256,
    maxBatch: MAX_BATCH,
    gatherMs: 20, // counting is not waited for: fewer, larger transactions
    handleBatch: countEventsOf(platform, mailer),
  });
}

/** The handler: counts the submission events of a batch in one transaction, then mails the warnings it queued. */
function countEventsOf(
  platform: Platform,
  mailer: ReturnType<typeof createMailer>,
): (messages: Delivered[]) => Promise<Outcome[]> {
  const { db, logger, clock, config } = platform;
  return async (messages) => {
    const checked = messages.map(({ data }) => check(data));
    const events = checked.filter((c): c is SubmissionEvent => !('drop' in c));
    const outcomes = checked.map((c): Outcome => ('drop' in c ? c : ACK));
    if (events.length === 0) return outcomes;
    let warningIds: string[];
    try {
      ({ warningIds } = await recordSubmissionEvents({ db, events, now: clock.now() }));
    } catch (err) {
      // Alone, an event whose account (or plan) is gone can never be counted.
      if (events.length === 1 && isForeignKeyViolation(err))
        return checked.map((c): Outcome => ('drop' in c ? c : { drop: `account ${c.account_id} does not exist` }));
      throw err;
    }
    if (warningIds.length)
      await sendQuotaWarnings({
        db,
        mailer,
        logger,
        publicBaseUrl: config.PUBLIC_BASE_URL,
        now: () => clock.now(),
        ids: warningIds,
      }).catch((err) => logger.warn({ err }, 'quota warnings will be retried'));
    return outcomes;
  };
}

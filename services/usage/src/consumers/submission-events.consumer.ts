import { AckPolicy, DeliverPolicy, nanos } from 'nats';
import {
  ACK,
  checkSubmissionEvent,
  createMailer,
  ensureConsumer,
  isForeignKeyViolation,
  runConsumer,
  type Outcome,
  type Platform,
  type SubmissionEvent,
  type Worker,
} from '@intake/shared';
import { recordSubmissionEvent, recordSubmissionEvents, USAGE_CONSUMER } from '../domain/record-event';
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
 * deleted meanwhile, say), each is counted alone, so only the one that cannot be counted is dropped.
 */
export async function startUsageConsumer(
  platform: Platform,
  mailer: ReturnType<typeof createMailer>,
  options: UsageConsumerOptions = {},
): Promise<Worker> {
  const { db, logger, clock, nats, config } = platform;
  await ensureUsageConsumer(platform, options);
  const sendWarnings = async (ids: string[]) => {
    if (ids.length)
      await sendQuotaWarnings({
        db,
        mailer,
        logger,
        publicBaseUrl: config.PUBLIC_BASE_URL,
        now: () => clock.now(),
        ids,
      }).catch((err) => logger.warn({ err }, 'quota warnings will be retried'));
  };
  return runConsumer({
    nats,
    stream: nats.names.eventsStream,
    durable: USAGE_CONSUMER,
    logger,
    concurrency: options.concurrency ?? 256,
    maxBatch: MAX_BATCH,
    gatherMs: 20, // counting is not waited for: fewer, larger transactions
    async handleBatch(batch): Promise<Outcome[]> {
      const outcomes: Outcome[] = [];
      const events: SubmissionEvent[] = [];
      for (const { data } of batch) {
        const checked = check(data);
        if ('drop' in checked) outcomes.push(checked);
        else {
          outcomes.push(ACK);
          events.push(checked);
        }
      }
      if (events.length) {
        const { warningIds } = await recordSubmissionEvents({ db, events, now: clock.now() });
        await sendWarnings(warningIds);
      }
      return outcomes;
    },
    async handle(_msg, data): Promise<Outcome> {
      const event = check(data);
      if ('drop' in event) return event;
      let warningIds: string[];
      try {
        ({ warningIds } = await recordSubmissionEvent({ db, event, now: clock.now() }));
      } catch (err) {
        // The account (or the plan) is gone: the event can never be counted.
        if (isForeignKeyViolation(err)) return { drop: `account ${event.account_id} does not exist` };
        throw err;
      }
      await sendWarnings(warningIds);
      return ACK;
    },
  });
}

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
  type Worker,
} from '@intake/shared';
import { recordSubmissionEvent, USAGE_CONSUMER } from '../domain/record-event';
import { sendQuotaWarnings } from '../domain/quota-warnings';

export interface UsageConsumerOptions {
  /** How long a delivered message may stay unacknowledged before JetStream redelivers it. */
  ackWaitMs?: number;
  concurrency?: number;
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

/** Parse -> count (idempotent) -> ack; quota warnings queued by the count are mailed after commit. */
export async function startUsageConsumer(
  platform: Platform,
  mailer: ReturnType<typeof createMailer>,
  options: UsageConsumerOptions = {},
): Promise<Worker> {
  const { db, logger, clock, nats, config } = platform;
  await ensureUsageConsumer(platform, options);
  return runConsumer({
    nats,
    stream: nats.names.eventsStream,
    durable: USAGE_CONSUMER,
    logger,
    concurrency: options.concurrency ?? 8,
    async handle(_msg, data): Promise<Outcome> {
      const checked = checkSubmissionEvent(data);
      if (!checked.ok) return { drop: `not a submission event: ${checked.error}` };
      const event = checked.event;
      if (Number.isNaN(new Date(event.received_at).getTime()))
        return { drop: `received_at "${event.received_at}" is not a timestamp` };
      let warningIds: string[];
      try {
        ({ warningIds } = await recordSubmissionEvent({ db, event, now: clock.now() }));
      } catch (err) {
        // The account (or the plan) is gone: the event can never be counted.
        if (isForeignKeyViolation(err)) return { drop: `account ${event.account_id} does not exist` };
        throw err;
      }
      if (warningIds.length) {
        await sendQuotaWarnings({
          db,
          mailer,
          logger,
          publicBaseUrl: config.PUBLIC_BASE_URL,
          now: () => clock.now(),
          ids: warningIds,
        }).catch((err) => logger.warn({ err }, 'quota warnings will be retried'));
      }
      return ACK;
    },
  });
}

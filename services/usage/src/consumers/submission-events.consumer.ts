import Ajv from 'ajv';
import { AckPolicy, DeliverPolicy, nanos } from 'nats';
import { ACK, createMailer, ensureConsumer, runConsumer, SubmissionEvent, type Outcome, type Platform, type Worker } from '@intake/shared';
import { recordSubmissionEvent } from '../domain/record-event';
import { sendQuotaWarnings } from '../domain/quota-warnings';

export const USAGE_DURABLE = 'usage';

export interface UsageConsumerOptions {
  /** How long a delivered message may stay unacknowledged before JetStream redelivers it. */
  ackWaitMs?: number;
  concurrency?: number;
}

const validate = new Ajv({ allErrors: true, strict: false }).compile<SubmissionEvent>(SubmissionEvent);

/** The durable consumer over every submission event (`submission.created` and `submission.spam`). */
export async function ensureUsageConsumer(platform: Platform, options: UsageConsumerOptions = {}): Promise<void> {
  const { nats } = platform;
  await ensureConsumer(nats, nats.names.eventsStream, {
    durable_name: USAGE_DURABLE,
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
export async function startUsageConsumer(platform: Platform, mailer: ReturnType<typeof createMailer>, options: UsageConsumerOptions = {}): Promise<Worker> {
  const { db, logger, clock, nats, config } = platform;
  await ensureUsageConsumer(platform, options);
  return runConsumer({
    nats,
    stream: nats.names.eventsStream,
    durable: USAGE_DURABLE,
    logger,
    concurrency: options.concurrency ?? 8,
    async handle(_msg, data): Promise<Outcome> {
      if (!validate(data)) return { drop: `not a submission event: ${ajvMessage(validate.errors)}` };
      if (Number.isNaN(new Date(data.received_at).getTime())) return { drop: `received_at "${data.received_at}" is not a timestamp` };
      let warningIds: string[];
      try {
        ({ warningIds } = await recordSubmissionEvent({ db, event: data, now: clock.now() }));
      } catch (err) {
        // The account (or the plan) is gone: the event can never be counted.
        if ((err as { code?: string }).code === '23503') return { drop: `account ${data.account_id} does not exist` };
        throw err;
      }
      if (warningIds.length) {
        await sendQuotaWarnings({ db, mailer, logger, publicBaseUrl: config.PUBLIC_BASE_URL, now: () => clock.now(), ids: warningIds }).catch((err) => logger.warn({ err }, 'quota warnings will be retried'));
      }
      return ACK;
    },
  });
}

function ajvMessage(errors: typeof validate.errors): string {
  return (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; ');
}

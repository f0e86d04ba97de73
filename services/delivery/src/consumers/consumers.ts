import { AckPolicy, nanos } from 'nats';
import { Value } from '@sinclair/typebox/value';
import {
  ACK,
  checkSubmissionEvent,
  createMailer,
  createWebhookAgent,
  DeliveryRequested,
  ensureConsumer,
  eventWithPayload,
  runConsumer,
  SUBJECTS,
  type Outcome,
  type Platform,
  type SubmissionEvent,
  type Worker,
} from '@intake/shared';
import { attemptLeaseMs, batchedDeliveryStore, processDeliveryRequest } from '../domain/deliver';
import { fanOutSubmission, fanOutSubmissions } from '../domain/fan-out-batch';
import { findNotifyEmailsOfForms } from '../repositories/fan-out-batch.repository';
import { notifySubmission } from '../domain/notify';

/** Durable consumer names (other services must not reuse them). */
export const CONSUMERS = { fanOut: 'delivery-fanout', send: 'delivery-send', notify: 'delivery-notify' } as const;

/** How many notification e-mails are sent at once per process. */
const MAIL_CONCURRENCY = 8;

/** How many webhook attempts run at once per process: a slow receiver holds one slot, never the others. */
export const SEND_CONCURRENCY = 64;

/** The send consumer's ack deadline: comfortably above WEBHOOK_TIMEOUT_MS (a crashed attempt comes back after it). */
export function sendAckWaitMs(timeoutMs: number): number {
  return attemptLeaseMs(timeoutMs);
}

/** The delivery service's consumers, by the key of their durable name in CONSUMERS. */
export type DeliveryConsumer = keyof typeof CONSUMERS;

/**
 * Provisions the durable consumers and starts pulling: all three by default, or those named (the
 * benchmark runs each on a thread of its own to measure what each stage costs).
 */
export async function startDeliveryWorkers(
  platform: Platform,
  consumers: readonly DeliveryConsumer[] = ['fanOut', 'send', 'notify'],
): Promise<Worker[]> {
  const { nats, config, logger, db, secrets, clock } = platform;
  const { eventsStream, deliveriesStream } = nats.names;
  const created = nats.names.subject(SUBJECTS.submissionCreated);
  const ackWait = sendAckWaitMs(config.WEBHOOK_TIMEOUT_MS);
  const eventConsumer = {
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(30_000),
    max_deliver: -1,
    filter_subject: created,
    max_ack_pending: 10_000,
  };
  if (consumers.includes('fanOut'))
    await ensureConsumer(nats, eventsStream, { durable_name: CONSUMERS.fanOut, ...eventConsumer });
  if (consumers.includes('notify'))
    await ensureConsumer(nats, eventsStream, { durable_name: CONSUMERS.notify, ...eventConsumer });
  if (consumers.includes('send'))
    await ensureConsumer(nats, deliveriesStream, {
      durable_name: CONSUMERS.send,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ackWait),
      max_deliver: -1, // the attempt count lives in Postgres; naks and crash redeliveries must never exhaust it
      filter_subject: nats.names.subject(SUBJECTS.deliveryRequested),
      max_ack_pending: 50_000, // messages parked by a nak delay count here
    });

  const agent = createWebhookAgent({
    allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  });
  const mailer = createMailer(config, logger);
  const deliverDeps = { db, secrets, agent, config, now: () => clock.now(), store: batchedDeliveryStore(db) };

  const workers: Record<DeliveryConsumer, () => Worker> = {
    fanOut: () =>
      runConsumer({
        nats,
        stream: eventsStream,
        durable: CONSUMERS.fanOut,
        logger,
        concurrency: 64,
        gatherMs: 5,
        // The events that arrive together: one query for their forms' webhooks, one insert for their deliveries.
        async handleBatch(batch) {
          const outcomes: Outcome[] = [];
          const events: SubmissionEvent[] = [];
          for (const { data } of batch) {
            const checked = checkSubmissionEvent(data);
            if (!checked.ok) outcomes.push({ drop: `not a submission event: ${checked.error}` });
            else {
              outcomes.push(ACK);
              const event = await eventWithPayload(db, checked.event);
              if (event) events.push(event);
            }
          }
          await fanOutSubmissions({ db, nats, config, secrets, events, now: clock.now() });
          return outcomes;
        },
        async handle(_msg, data) {
          const checked = checkSubmissionEvent(data);
          if (!checked.ok) return { drop: `not a submission event: ${checked.error}` };
          const event = await eventWithPayload(db, checked.event);
          if (event) await fanOutSubmission({ db, nats, config, secrets, event, now: clock.now() });
          return ACK;
        },
      }),
    send: () =>
      runConsumer({
        nats,
        stream: deliveriesStream,
        durable: CONSUMERS.send,
        logger,
        concurrency: SEND_CONCURRENCY,
        async handle(_msg, data) {
          if (!Value.Check(DeliveryRequested, data)) return { drop: 'not a DeliveryRequested' };
          return processDeliveryRequest(deliverDeps, data);
        },
      }),
    notify: () =>
      runConsumer({
        nats,
        stream: eventsStream,
        durable: CONSUMERS.notify,
        logger,
        concurrency: 64,
        gatherMs: 5,
        // Most forms notify nobody: one query settles the batch's events of those forms; the others mail one by one.
        async handleBatch(batch) {
          const events = batch.map(({ data }) => checkSubmissionEvent(data));
          const withAddresses = await findNotifyEmailsOfForms(db, [
            ...new Set(events.flatMap((c) => (c.ok && c.event.status === 'received' ? [c.event.form_id] : []))),
          ]);
          const outcomes: Outcome[] = events.map((checked) =>
            checked.ok ? ACK : { drop: `not a submission event: ${checked.error}` },
          );
          const mails = events.flatMap((checked, i) =>
            checked.ok && checked.event.status === 'received' && withAddresses.has(checked.event.form_id)
              ? [{ i, event: checked.event }]
              : [],
          );
          // At most MAIL_CONCURRENCY SMTP sends at once.
          await Promise.all(
            Array.from({ length: Math.min(MAIL_CONCURRENCY, mails.length) }, async () => {
              for (let next = mails.shift(); next; next = mails.shift()) {
                const event = await eventWithPayload(db, next.event);
                outcomes[next.i] = event
                  ? await notifySubmission({ db, mailer, logger, config, secrets, event, now: clock.now() })
                  : ACK;
              }
            }),
          );
          return outcomes;
        },
        async handle(_msg, data) {
          const checked = checkSubmissionEvent(data);
          if (!checked.ok) return { drop: `not a submission event: ${checked.error}` };
          const event = await eventWithPayload(db, checked.event);
          return event ? notifySubmission({ db, mailer, logger, config, secrets, event, now: clock.now() }) : ACK;
        },
      }),
  };
  return [
    ...consumers.map((name) => workers[name]()),
    {
      async stop() {
        mailer.close();
        await agent.close().catch(() => undefined);
      },
    },
  ];
}

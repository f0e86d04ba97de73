import { AckPolicy, nanos } from 'nats';
import { Value } from '@sinclair/typebox/value';
import {
  ACK,
  checkSubmissionEvent,
  createMailer,
  DeliveryRequested,
  ensureConsumer,
  eventWithPayload,
  runConsumer,
  SUBJECTS,
  type Platform,
  type Worker,
} from '@intake/shared';
import { createWebhookAgent } from '../domain/sender';
import { attemptLeaseMs, processDeliveryRequest } from '../domain/deliver';
import { fanOutSubmission } from '../domain/fan-out';
import { notifySubmission } from '../domain/notify';

/** Durable consumer names (other services must not reuse them). */
export const CONSUMERS = { fanOut: 'delivery-fanout', send: 'delivery-send', notify: 'delivery-notify' } as const;

/** How many webhook attempts run at once per process: a slow receiver holds one slot, never the others. */
export const SEND_CONCURRENCY = 64;

/** The send consumer's ack deadline: comfortably above WEBHOOK_TIMEOUT_MS (a crashed attempt comes back after it). */
export function sendAckWaitMs(timeoutMs: number): number {
  return attemptLeaseMs(timeoutMs);
}

/** Provisions the three durable consumers and starts pulling. */
export async function startDeliveryWorkers(platform: Platform): Promise<Worker[]> {
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
  await ensureConsumer(nats, eventsStream, { durable_name: CONSUMERS.fanOut, ...eventConsumer });
  await ensureConsumer(nats, eventsStream, { durable_name: CONSUMERS.notify, ...eventConsumer });
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
  const deliverDeps = { db, secrets, agent, config, now: () => clock.now() };

  const workers: Worker[] = [
    runConsumer({
      nats,
      stream: eventsStream,
      durable: CONSUMERS.fanOut,
      logger,
      concurrency: 16,
      async handle(_msg, data) {
        const checked = checkSubmissionEvent(data);
        if (!checked.ok) return { drop: `not a submission event: ${checked.error}` };
        const event = await eventWithPayload(db, checked.event);
        if (event) await fanOutSubmission({ db, nats, config, secrets, event, now: clock.now() });
        return { ack: true };
      },
    }),
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
    runConsumer({
      nats,
      stream: eventsStream,
      durable: CONSUMERS.notify,
      logger,
      concurrency: 8,
      async handle(_msg, data) {
        const checked = checkSubmissionEvent(data);
        if (!checked.ok) return { drop: `not a submission event: ${checked.error}` };
        const event = await eventWithPayload(db, checked.event);
        return event ? notifySubmission({ db, mailer, logger, config, secrets, event, now: clock.now() }) : ACK;
      },
    }),
  ];
  return [
    ...workers,
    {
      async stop() {
        mailer.close();
        await agent.close().catch(() => undefined);
      },
    },
  ];
}

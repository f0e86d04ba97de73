import { AckPolicy, nanos } from 'nats';
import { Value } from '@sinclair/typebox/value';
import {
  ACK,
  checkSubmissionEvent,
  createMailer,
  createWebhookAgent,
  DeliveryRequested,
  ensureConsumer,
  NotificationRequested,
  eventWithPayload,
  runConsumer,
  SUBJECTS,
  type Delivered,
  type Outcome,
  type Platform,
  type SubmissionEvent,
  type Worker,
} from '@intake/shared';
import { attemptLeaseMs, batchedDeliveryStore, processDeliveryRequest } from '../domain/deliver';
import { fanOutSubmission, fanOutSubmissions } from '../domain/fan-out-batch';
import { batchedNotificationRecorder, notifySubmissions } from '../domain/notify';
import { drainFormerNotifyConsumer } from './former-notify';

/** Durable consumer names (other services must not reuse them). */
export const CONSUMERS = { fanOut: 'delivery-fanout', send: 'delivery-send', mail: 'delivery-mail' } as const;

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
 * benchmark runs each on a thread of its own to measure what each stage costs). With the mail
 * consumer comes the drain of the events' former `delivery-notify` consumer, where one is left.
 */
export async function startDeliveryWorkers(
  platform: Platform,
  consumers: readonly DeliveryConsumer[] = ['fanOut', 'send', 'mail'],
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
  if (consumers.includes('send'))
    await ensureConsumer(nats, deliveriesStream, {
      durable_name: CONSUMERS.send,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ackWait),
      max_deliver: -1, // the attempt count lives in Postgres; naks and crash redeliveries must never exhaust it
      filter_subject: nats.names.subject(SUBJECTS.deliveryRequested),
      max_ack_pending: 50_000, // messages parked by a nak delay count here
    });
  if (consumers.includes('mail'))
    await ensureConsumer(nats, deliveriesStream, {
      durable_name: CONSUMERS.mail,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(30_000), // kept alive while a send runs
      max_deliver: -1, // the attempt count lives in Postgres, as for webhooks
      filter_subject: nats.names.subject(SUBJECTS.notificationRequested),
      max_ack_pending: 50_000, // mails waiting for their retry count here
    });

  const agent = createWebhookAgent({
    allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  });
  const mailer = createMailer(config, logger);
  const deliverDeps = { db, secrets, agent, config, now: () => clock.now(), store: batchedDeliveryStore(db) };
  const notifyDeps = { db, mailer, logger, config, secrets, record: batchedNotificationRecorder(db) };

  // The mails that arrive together are claimed in one statement, sent MAIL_CONCURRENCY at a time and
  // recorded a turn's worth at a time.
  const sendMails = async (batch: Delivered[]): Promise<Outcome[]> => {
    const requests = batch.map(({ data }) => (Value.Check(NotificationRequested, data) ? data : undefined));
    const items = requests.flatMap((r, i) => (r ? [{ i, event: r.event, to: r.to }] : []));
    const mailed = await notifySubmissions({ ...notifyDeps, items, now: clock.now() });
    const outcomes: Outcome[] = requests.map((r) => (r ? ACK : { drop: 'not a NotificationRequested' }));
    items.forEach(({ i }, k) => (outcomes[i] = mailed[k]!));
    return outcomes;
  };

  const workers: Record<DeliveryConsumer, () => Worker> = {
    fanOut: () =>
      runConsumer({
        nats,
        stream: eventsStream,
        durable: CONSUMERS.fanOut,
        logger,
        concurrency: 64,
        gatherMs: 'whileBusy',
        // The events that arrive together: one query for their forms' webhooks and addresses, one insert for their deliveries.
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
    mail: () =>
      runConsumer({
        nats,
        stream: deliveriesStream,
        durable: CONSUMERS.mail,
        logger,
        concurrency: 64,
        gatherMs: 5,
        handleBatch: sendMails,
      }),
  };
  const started = consumers.map((name) => workers[name]());
  if (consumers.includes('mail')) started.push(drainFormerNotifyConsumer(platform));
  return [
    ...started,
    {
      async stop() {
        mailer.close();
        await agent.close().catch(() => undefined);
      },
    },
  ];
}

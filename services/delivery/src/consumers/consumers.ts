import { AckPolicy, nanos } from 'nats';
import { Value } from '@sinclair/typebox/value';
import { createMailer } from '@intake/shared/base';
import { checkSubmissionEvent, NotificationRequested, SUBJECTS } from '@intake/shared/contracts';
import {
  ACK,
  ensureConsumer,
  ensureStreams,
  eventWithPayload,
  runConsumer,
  type Delivered,
  type Outcome,
  type Outcomes,
} from '@intake/shared/messaging';
import { type Platform, type Worker } from '@intake/shared/runtime';
import { createWebhookAgent } from '../send/attempt';
import { attemptLeaseMs, deliveryStore, type DeliverDeps } from '../send/deliver';
import { sendRequested } from '../send/parse';
import { SendSlots } from '../send/slots';
import { answerTestPings } from '../send/test-ping';
import { fanOutSubmissions, type EventToFanOut } from '../domain/fan-out';
import {
  MAIL_LEASE_MS,
  MAX_MAIL_ATTEMPTS,
  notificationRecorder,
  notifySubmissions,
  type NotifyDeps,
} from '../domain/notify';
import { autorespond } from '../domain/autoresponse';
import { recordNotificationOutcomes } from '../repositories/notification.repository';
import { startDigests } from '../domain/digest';
import { startWebhookUpkeep } from '../domain/webhook-health';

/** Durable consumer names (other services must not reuse them). */
export const CONSUMERS = { fanOut: 'delivery-fanout', send: 'delivery-send', mail: 'delivery-mail' } as const;

/** The send consumer's `max_ack_pending` when it is created and SEND_MAX_ACK_PENDING is not set. */
export const SEND_MAX_ACK_PENDING_DEFAULT = 10_000;

/** The send consumer's ack deadline: comfortably above WEBHOOK_TIMEOUT_MS (a crashed attempt comes back after it). */
export function sendAckWaitMs(timeoutMs: number): number {
  return attemptLeaseMs(timeoutMs);
}

/** The delivery service's consumers, by the key of their durable name in CONSUMERS. */
export type DeliveryConsumer = keyof typeof CONSUMERS;

/** Provisions the durable consumers named. */
export async function ensureDeliveryConsumers(
  platform: Platform,
  consumers: readonly DeliveryConsumer[],
): Promise<void> {
  const { nats, config } = platform;
  const { eventsStream, deliveriesStream } = nats.names;
  if (consumers.includes('fanOut'))
    await ensureConsumer(nats, eventsStream, {
      durable_name: CONSUMERS.fanOut,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(30_000),
      max_deliver: -1,
      filter_subject: nats.names.subject(SUBJECTS.submissionCreated),
      max_ack_pending: 10_000,
    });
  if (consumers.includes('send'))
    await ensureConsumer(
      nats,
      deliveriesStream,
      {
        durable_name: CONSUMERS.send,
        ack_policy: AckPolicy.Explicit,
        ack_wait: nanos(sendAckWaitMs(config.WEBHOOK_TIMEOUT_MS)),
        max_deliver: -1, // the attempt count lives in Postgres; naks and crash redeliveries must never exhaust it
        filter_subject: nats.names.subject(SUBJECTS.deliveryRequested),
        // In flight, deferred for a slot, or waiting a retry step of up to PARK_AFTER_MS (longer ones are parked in
        // Postgres): set when the setting is, else left as it is (an operator's change stays), 10,000 when created.
        ...(config.SEND_MAX_ACK_PENDING === undefined ? {} : { max_ack_pending: config.SEND_MAX_ACK_PENDING }),
      },
      { max_ack_pending: SEND_MAX_ACK_PENDING_DEFAULT },
    );
  if (consumers.includes('mail'))
    await ensureConsumer(nats, deliveriesStream, {
      durable_name: CONSUMERS.mail,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(30_000), // kept alive while a send runs
      max_deliver: -1, // the attempt count lives in Postgres, as for webhooks
      filter_subject: nats.names.subject(SUBJECTS.notificationRequested),
      max_ack_pending: 50_000, // mails in flight, and those waiting a retry of a minute or less (longer: Postgres)
    });
}

/**
 * The fan-out of the events that arrive while none is being fanned out: one query for their forms'
 * webhooks and addresses, one insert for their deliveries (fanOutSubmissions).
 */
function fanOutEvents(platform: Platform): (messages: Delivered[]) => Promise<Outcomes> {
  const { db, nats, config, secrets, clock } = platform;
  return async (messages) => {
    const outcomes: Outcome[] = [];
    const events: EventToFanOut[] = [];
    for (const { data, within } of messages) {
      const checked = checkSubmissionEvent(data);
      if (!checked.ok) outcomes.push({ drop: `not a submission event: ${checked.error}` });
      else {
        outcomes.push(ACK);
        // A payload too large for the message is read from the submission; one deleted meanwhile is not fanned out.
        const event = await eventWithPayload(db, checked.event);
        if (event) events.push({ event, within });
      }
    }
    await fanOutSubmissions({ db, nats, config, secrets, events, now: clock.now() });
    return outcomes;
  };
}

/**
 * The mails that arrive together: the owners' claimed in one statement, sent MAIL_CONCURRENCY at a
 * time, recorded through a queue; the submitters' autoresponses each claimed and sent on its own.
 */
function sendMails(deps: Omit<NotifyDeps, 'now'>, platform: Platform): (messages: Delivered[]) => Promise<Outcomes> {
  return async (messages) => {
    const now = platform.clock.now();
    const requests = messages.map(({ data }) => (Value.Check(NotificationRequested, data) ? data : undefined));
    const items = requests.flatMap((r, i) => (r && !r.autoresponse ? [{ i, event: r.event, to: r.to }] : []));
    const responses = requests.flatMap((r, i) =>
      r?.autoresponse ? [{ i, event: r.event, settings: r.autoresponse }] : [],
    );
    const record = deps.record ?? ((outcome) => recordNotificationOutcomes(deps.db, [outcome]));
    const autoDeps = { ...deps, record, now, leaseMs: MAIL_LEASE_MS, maxAttempts: MAX_MAIL_ATTEMPTS };
    const [mailed, responded] = await Promise.all([
      notifySubmissions({ ...deps, items, now }),
      Promise.all(responses.map((item) => autorespond(autoDeps, item))),
    ]);
    const outcomes: Outcome[] = requests.map((r) => (r ? ACK : { drop: 'not a NotificationRequested' }));
    items.forEach(({ i }, k) => (outcomes[i] = mailed[k]!));
    responses.forEach(({ i }, k) => (outcomes[i] = responded[k]!));
    return outcomes;
  };
}

/** The send path's dependencies of one process: its webhook agent and send slots. */
function sendPath(platform: Platform): DeliverDeps {
  const { config, db, secrets, clock } = platform;
  const agent = createWebhookAgent({
    allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  });
  // A slow receiver holds at most its webhook's slots, a busy account at most its share (SendSlots).
  const slots = new SendSlots({ total: config.SEND_CONCURRENCY, perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY });
  return {
    db,
    secrets,
    agent,
    config,
    slots,
    now: () => clock.now(),
    store: deliveryStore(db, attemptLeaseMs(config.WEBHOOK_TIMEOUT_MS)),
  };
}

/** `first`, and once it has stopped, `then`. */
function thenStop(first: Worker, then: Worker): Worker {
  return {
    async stop() {
      await first.stop();
      await then.stop();
    },
  };
}

/** Only the test pings of a delivery process, with a send path of their own (for tests that need nothing else). */
export function startTestPings(platform: Platform): Worker {
  const deps = sendPath(platform);
  const pings = answerTestPings(deps, platform);
  const health = deps.store.start(platform.logger);
  return {
    async stop() {
      await thenStop(pings, health).stop();
      await deps.agent.close().catch(() => undefined);
    },
  };
}

/**
 * Provisions the durable consumers and starts pulling: all three by default, or those named (the
 * benchmark runs each on a thread of its own to measure what each stage costs).
 */
export async function startDeliveryWorkers(
  platform: Platform,
  consumers: readonly DeliveryConsumer[] = ['fanOut', 'send', 'mail'],
): Promise<Worker[]> {
  const { nats, config, logger, db, secrets, clock } = platform;
  const { eventsStream, deliveriesStream } = nats.names;
  await ensureDeliveryConsumers(platform, consumers);
  const mailer = createMailer(config, logger);
  const deliverDeps = sendPath(platform);
  const notifyDeps = { db, mailer, logger, config, secrets, record: notificationRecorder(db) };
  // A consumer whose stream or durable is gone makes both again (the reconciler re-sends what the stream held).
  const common = (name: DeliveryConsumer) => ({
    nats,
    logger,
    provision: async () => {
      await ensureStreams(nats);
      await ensureDeliveryConsumers(platform, [name]);
    },
  });
  const workers: Record<DeliveryConsumer, () => Worker> = {
    fanOut: () =>
      runConsumer({
        ...common('fanOut'),
        stream: eventsStream,
        durable: CONSUMERS.fanOut,
        concurrency: 64,
        gatherMs: 'whileBusy',
        handleBatch: fanOutEvents(platform),
      }),
    // Requests of the same millisecond share their claim; each holds its slot until its attempt is recorded.
    // The webhooks' health, tallied from the attempts it records, is written once a second and once more when it stops.
    send: () =>
      thenStop(
        runConsumer({
          ...common('send'),
          stream: deliveriesStream,
          durable: CONSUMERS.send,
          concurrency: config.SEND_CONCURRENCY,
          gatherMs: 1,
          handleBatch: sendRequested(deliverDeps),
        }),
        deliverDeps.store.start(logger),
      ),
    mail: () =>
      runConsumer({
        ...common('mail'),
        stream: deliveriesStream,
        durable: CONSUMERS.mail,
        concurrency: 64,
        gatherMs: 5,
        handleBatch: sendMails(notifyDeps, platform),
      }),
  };
  const started = consumers.map((name) => workers[name]());
  // Daily digests go with the mail.
  if (consumers.includes('mail')) started.push(startDigests({ db, mailer, logger, config, now: () => clock.now() }));
  // The webhooks' health sweep, replay and parking pumps, reconciler and test pings go with the sending.
  if (consumers.includes('send'))
    started.push(
      ...startWebhookUpkeep({
        db,
        nats,
        mailer,
        logger,
        config,
        clock,
        sendConsumer: CONSUMERS.send,
        slots: deliverDeps.slots,
        fanOut: { consumer: CONSUMERS.fanOut, secrets },
      }),
      answerTestPings(deliverDeps, platform),
    );
  const closeClients: Worker = {
    async stop() {
      mailer.close();
      await deliverDeps.agent.close().catch(() => undefined);
    },
  };
  return [...started, closeClients];
}

import { type Db } from '@intake/shared/base';
import { buildSubmissionCreatedEvent, firstIdAt, type SubmissionEvent } from '@intake/shared/contracts';
import { type Nats } from '@intake/shared/messaging';
import { deliveryRequest, publishTraced } from '@intake/shared/webhooks';
import {
  takeDueParked,
  watchWaitingDeliveries,
  type DueDelivery,
  type ReconcileStep,
} from '../repositories/parking.repository';
import type { SendSlots } from '../send/slots';
import { findFanOutTargets, formKey } from '../repositories/fan-out-batch.repository';
import { takeDueNotifications, type DueNotification } from '../repositories/notification.repository';
import { notificationRequest } from './notify';

/** How often a delivery process looks for parked deliveries that are due. */
export const PARKING_PUMP_MS = 5_000;
/** Parked deliveries asked for per pump and process. */
const PER_PUMP = 500;

/**
 * Asks for the attempts of the parked deliveries that are due (migration 025, `PARK_AFTER_MS`): one
 * `delivery.requested` each, in one batch, each named after the delivery and its due time, so that two
 * processes, or a pump that runs again before its commit, send it once. A delivery asked for is asked for again
 * `recheckMs` (RECONCILE_AFTER) later if its attempt has not moved it meanwhile (its request was lost).
 * Returns how many were asked for.
 */
export function requeueDueDeliveries(props: {
  db: Db;
  nats: Nats;
  now: Date;
  recheckMs: number;
  limit?: number;
  /** This process's send slots: a webhook broken here gets one delivery asked for, its probe; the rest stay parked. */
  slots?: Pick<SendSlots, 'brokenFor'>;
}): Promise<number> {
  return takeDueParked(
    props.db,
    { now: props.now, limit: props.limit ?? PER_PUMP, recheckMs: props.recheckMs },
    (due) =>
      publishTraced(
        props.nats,
        due.map(({ id, dueAt, webhookId, accountId }) =>
          deliveryRequest({
            deliveryId: id,
            trigger: 'schedule',
            eventId: `${id}.due.${dueAt.getTime()}`,
            target: { webhookId, accountId },
          }),
        ),
      ),
    (due) => (props.slots ? heldBack(props.slots, due, props.now) : new Map()),
  );
}

/**
 * Of the due deliveries of a webhook broken in this process, the one its probe may take (when the probe is due and
 * none is in flight), and the others kept parked until about the next probe: asked for, they would only be parked
 * again, after a burst of requests that other accounts' deliveries wait behind.
 */
function heldBack(slots: Pick<SendSlots, 'brokenFor'>, due: DueDelivery[], now: Date): Map<string, Date> {
  const held = new Map<string, Date>();
  const probing = new Set<string>();
  for (const d of due) {
    const wait = slots.brokenFor(d.webhookId);
    if (wait === undefined) continue;
    if (wait.probeInMs === 0 && !probing.has(d.webhookId)) probing.add(d.webhookId);
    else held.set(d.id, new Date(now.getTime() + Math.max(wait.probeInMs, wait.probeEveryMs)));
  }
  return held;
}

/**
 * Asks again for the mails that are due (migration 027): an owner's mail whose request was lost (its row, written by
 * the fan-out, is still pending `RECONCILE_AFTER` later and nobody holds it), and a mail or autoresponse whose retry
 * waited over a minute in Postgres. One `delivery.notification` each, rebuilt from the submission (its fields read
 * when it is sent, as for a large event), named after the row and its due time; the claim decides whether it is sent,
 * so a request that arrives twice sends one mail. An autoresponse goes out with its form's settings of now; a form no
 * longer answering its submitters skips it. Returns how many were asked for.
 */
export function requeueDueNotifications(props: {
  db: Db;
  nats: Nats;
  now: Date;
  recheckMs: number;
  limit?: number;
}): Promise<number> {
  const { db, nats } = props;
  return takeDueNotifications(
    db,
    { now: props.now, limit: props.limit ?? PER_PUMP, recheckMs: props.recheckMs },
    async (due) => {
      const skipped = new Map<string, string>();
      const events = due.map((d) => ({ due: d, event: rebuiltEvent(d) }));
      const responders = await findFanOutTargets(
        db,
        events.filter((e) => e.due.kind === 'autoresponse').map((e) => e.event),
      );
      const requests = events.flatMap(({ due: d, event }) => {
        if (d.kind === 'submission') return [notificationRequest({ event, to: d.recipients })];
        const settings = responders.get(formKey(event))?.autoresponse;
        if (!settings) skipped.set(d.id, 'the form no longer sends autoresponses');
        return settings ? [notificationRequest({ event, to: [], autoresponse: settings })] : [];
      });
      await publishTraced(nats, requests);
      return { skipped };
    },
  );
}

/** A due mail's submission event, as the outbox published it, but without the fields (read when it is sent). */
function rebuiltEvent(due: DueNotification): SubmissionEvent {
  const { payload } = buildSubmissionCreatedEvent({
    submission: due.submission!,
    files: due.files,
    formName: due.formName,
    omitPayload: true,
  });
  return { event_id: `${due.id}.due.${due.dueAt.getTime()}`, ...payload };
}

/** How often a delivery process walks the reconciler on. */
export const RECONCILE_MS = 30_000;
/** Deliveries walked per transaction, and transactions per walk at most. */
const WALK_STEP = 5_000;
const WALK_STEPS = 20;
/**
 * While the send consumer holds more undelivered requests than this, it is draining a backlog, not missing requests:
 * the reconciler waits rather than add requests for deliveries whose own are still queued.
 */
export const RECONCILE_BACKLOG = 10_000;

/**
 * The reconciler (migration 026): every delivery still waiting `afterMs` after it was made, and not parked, is parked
 * due at its next attempt, so the parking pump asks for it, and asks again every `afterMs`, until it ends. A
 * delivery whose request a lost, purged or restored stream took (or a fan-out that died between its insert and its
 * publish) therefore never stays pending: it is sent once more, and once only, since the claim decides by its state in
 * Postgres. Walks on from where it stopped, one process at a time; returns what it walked, or 'backlog' when it waited.
 */
export async function reconcileDeliveries(props: {
  db: Db;
  nats: Nats;
  /** The send consumer's durable name (its backlog is checked first). */
  sendConsumer: string;
  now: Date;
  afterMs: number;
}): Promise<ReconcileStep | 'backlog'> {
  const { db, nats } = props;
  const info = await nats.jsm.consumers.info(nats.names.deliveriesStream, props.sendConsumer).catch(() => undefined);
  if (info && info.num_pending > RECONCILE_BACKLOG) return 'backlog';
  const before = firstIdAt('delivery', props.now.getTime() - props.afterMs);
  const total: ReconcileStep = { walked: 0, parked: 0 };
  for (let i = 0; i < WALK_STEPS; i++) {
    const step = await watchWaitingDeliveries(db, { before, limit: WALK_STEP });
    if (!step) break;
    total.walked += step.walked;
    total.parked += step.parked;
    if (step.walked < WALK_STEP) break;
  }
  return total;
}

import { context, trace, type Attributes } from '@opentelemetry/api';
import { SUBJECTS, type DeliveryRequested } from '../contracts/events';
import { newId } from '../contracts/ids';
import type { Within } from '../messaging/consumer';
import { type Nats } from '../messaging/nats';
import { publishInSpans, StreamPublisher } from '../messaging/stream-publisher';

const tracer = trace.getTracer('intake-delivery');

/** A message of the deliveries stream for `publishTraced`: its subject (relative to NATS_PREFIX), the trace it joins. */
export interface TracedMessage {
  subject: string;
  message: { event_id: string };
  attributes: Attributes;
  within?: Within;
}

/**
 * A `delivery.requested`, for `publishTraced`. Its msgID (`event_id`) deduplicates a republished initial request, or,
 * with `eventId`, a republished request of a parked retry; a replay gets a fresh one.
 */
export function deliveryRequest(
  props: {
    deliveryId: string;
    trigger: DeliveryRequested['trigger'];
    eventId?: string;
    /** The delivery's webhook and account, when known (see DeliveryRequested). */
    target?: { webhookId: string; accountId: string };
  },
  within?: Within,
): TracedMessage {
  const eventId = props.eventId ?? (props.trigger === 'schedule' ? `${props.deliveryId}.initial` : newId('event'));
  const message: DeliveryRequested = { event_id: eventId, delivery_id: props.deliveryId, trigger: props.trigger };
  if (props.target) {
    message.webhook_id = props.target.webhookId;
    message.account_id = props.target.accountId;
  }
  return {
    subject: SUBJECTS.deliveryRequested,
    message,
    attributes: { 'intake.webhook.delivery_id': props.deliveryId },
    within,
  };
}

/** Publishes one `delivery.requested` (`deliveryRequest`) and waits until the stream has stored it. */
export function requestDelivery(
  nats: Nats,
  props: { deliveryId: string; trigger: DeliveryRequested['trigger']; eventId?: string },
): Promise<void> {
  return publishTraced(nats, [deliveryRequest(props)]);
}

const publishers = new WeakMap<Nats['nc'], StreamPublisher>();

/**
 * Publishes messages of the deliveries stream as one batch (a StreamPublisher per connection: one inbox and one timer
 * for the batch, as the outbox relay does), each inside a PRODUCER span of its own trace (`within`) whose context
 * rides in its headers, so its consumer continues the trace; the msgID is the message's `event_id`, so a second
 * publish within the stream's window is dropped. The spans end when the batch is acknowledged, failed with the error
 * when it is not.
 */
export async function publishTraced(nats: Nats, items: TracedMessage[]): Promise<void> {
  if (items.length === 0) return;
  let publisher = publishers.get(nats.nc);
  if (!publisher) publishers.set(nats.nc, (publisher = new StreamPublisher(nats.nc)));
  const messages = items.map(({ subject, message, attributes, within = (work) => work() }) => ({
    subject: nats.names.subject(subject),
    data: JSON.stringify(message),
    msgId: message.event_id,
    parent: within(() => context.active()),
    attributes,
  }));
  await publishInSpans(publisher, tracer, messages, 5000);
}

import { context, propagation, SpanKind, trace, type Attributes, type Span } from '@opentelemetry/api';
import { SUBJECTS, type DeliveryRequested } from '../contracts/events';
import { newId } from '../contracts/ids';
import type { Within } from '../messaging/consumer';
import { toNatsHeaders } from '../messaging/trace-headers';
import { type Nats } from '../messaging/nats';
import { StreamPublisher, type StreamMessage } from '../messaging/stream-publisher';
import { failSpan } from '../telemetry/signals';

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
  const spans: Span[] = [];
  const messages = items.map(({ subject: relative, message, attributes, within = (work) => work() }) =>
    within((): StreamMessage => {
      const subject = nats.names.subject(relative);
      const span = tracer.startSpan(`publish ${subject}`, {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.system': 'nats',
          'messaging.operation.type': 'send',
          'messaging.operation.name': 'publish',
          'messaging.destination.name': subject,
          'messaging.message.id': message.event_id,
          ...attributes,
        },
      });
      spans.push(span);
      const carrier: Record<string, string> = {};
      propagation.inject(trace.setSpan(context.active(), span), carrier);
      return { subject, data: JSON.stringify(message), msgId: message.event_id, headers: toNatsHeaders(carrier) };
    }),
  );
  try {
    await publisher.publishAll(messages, 5000);
  } catch (err) {
    for (const span of spans) failSpan(span, err);
    throw err;
  } finally {
    for (const span of spans) span.end();
  }
}

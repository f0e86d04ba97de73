import { context, propagation, SpanKind, trace, type Attributes, type Span } from '@opentelemetry/api';
import { SUBJECTS, type DeliveryRequested } from '../contracts/events';
import { newId } from '../contracts/ids';
import type { Within } from '../messaging/consumer';
import { currentTraceHeaders, toNatsHeaders, type Nats } from '../messaging/nats';
import { StreamPublisher, type StreamMessage } from '../messaging/stream-publisher';
import { failSpan, inActiveSpan } from '../base/spans';

const tracer = trace.getTracer('intake-delivery');

/**
 * Publishes one `delivery.requested` inside a PRODUCER span whose context rides in the NATS
 * headers, so the send consumer continues the trace. The msgID deduplicates a republished
 * initial request (or, with `eventId`, a republished request of a parked retry); a replay gets a fresh one.
 */
export async function requestDelivery(
  nats: Nats,
  props: { deliveryId: string; trigger: DeliveryRequested['trigger']; eventId?: string },
): Promise<void> {
  const eventId = props.eventId ?? (props.trigger === 'schedule' ? `${props.deliveryId}.initial` : newId('event'));
  const message: DeliveryRequested = { event_id: eventId, delivery_id: props.deliveryId, trigger: props.trigger };
  await publishTraced(nats, {
    subject: SUBJECTS.deliveryRequested,
    message,
    attributes: { 'intake.webhook.delivery_id': props.deliveryId },
  });
}

/**
 * Publishes one message of the deliveries stream (`subject` relative to NATS_PREFIX) inside a
 * PRODUCER span whose context rides in the NATS headers, so its consumer continues the trace; its
 * `event_id` is the Nats-Msg-Id, so a second publish within the stream's window is dropped. A
 * failed publish marks the span failed (with the exception) before going on up.
 */
export async function publishTraced(
  nats: Nats,
  props: { subject: string; message: { event_id: string }; attributes: Attributes },
): Promise<void> {
  const subject = nats.names.subject(props.subject);
  const eventId = props.message.event_id;
  const attributes = {
    'messaging.system': 'nats',
    'messaging.destination.name': subject,
    'messaging.message.id': eventId,
    ...props.attributes,
  };
  await inActiveSpan(tracer, `${subject} publish`, { kind: SpanKind.PRODUCER, attributes }, async () => {
    await nats.js.publish(subject, JSON.stringify(props.message), {
      msgID: eventId,
      headers: toNatsHeaders(currentTraceHeaders()),
      timeout: 5000,
    });
  });
}

/** A message of the deliveries stream for `publishTracedBatch`: its subject (relative to NATS_PREFIX), the trace it joins. */
export interface TracedMessage {
  subject: string;
  message: { event_id: string };
  attributes: Attributes;
  within?: Within;
}

/** The `delivery.requested` of a delivery's first attempt, for `publishTracedBatch` (as `requestDelivery` sends it). */
export function initialDeliveryRequest(deliveryId: string, within?: Within): TracedMessage {
  const message: DeliveryRequested = {
    event_id: `${deliveryId}.initial`,
    delivery_id: deliveryId,
    trigger: 'schedule',
  };
  return {
    subject: SUBJECTS.deliveryRequested,
    message,
    attributes: { 'intake.webhook.delivery_id': deliveryId },
    within,
  };
}

const publishers = new WeakMap<Nats['nc'], StreamPublisher>();

/**
 * Publishes messages of the deliveries stream as one batch (a StreamPublisher per connection: one inbox and one timer
 * for the batch, as the outbox relay does), each inside a PRODUCER span of its own trace (`within`) whose context
 * rides in its headers, as `publishTraced` does one at a time. The spans end when the batch is acknowledged, failed
 * with the error when it is not.
 */
export async function publishTracedBatch(nats: Nats, items: TracedMessage[]): Promise<void> {
  if (items.length === 0) return;
  let publisher = publishers.get(nats.nc);
  if (!publisher) publishers.set(nats.nc, (publisher = new StreamPublisher(nats.nc)));
  const spans: Span[] = [];
  const messages = items.map(({ subject: relative, message, attributes, within = (work) => work() }) =>
    within((): StreamMessage => {
      const subject = nats.names.subject(relative);
      const span = tracer.startSpan(`${subject} publish`, {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.system': 'nats',
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

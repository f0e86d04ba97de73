import { SpanKind, trace, type Attributes } from '@opentelemetry/api';
import { SUBJECTS, type DeliveryRequested } from '../contracts/events';
import { newId } from '../contracts/ids';
import { currentTraceHeaders, toNatsHeaders, type Nats } from '../messaging/nats';
import { inActiveSpan } from '../base/spans';

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

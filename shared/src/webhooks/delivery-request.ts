import { SpanKind, trace } from '@opentelemetry/api';
import { SUBJECTS, type DeliveryRequested } from '../events';
import { newId } from '../ids';
import { currentTraceHeaders, toNatsHeaders, type Nats } from '../nats';
import { inActiveSpan } from '../spans';

const tracer = trace.getTracer('intake-delivery');

/**
 * Publishes one `delivery.requested` inside a PRODUCER span whose context rides in the NATS
 * headers, so the send consumer continues the trace. The msgID deduplicates a republished
 * initial request; a replay gets a fresh one.
 */
export async function requestDelivery(
  nats: Nats,
  props: { deliveryId: string; trigger: DeliveryRequested['trigger'] },
): Promise<void> {
  const eventId = props.trigger === 'schedule' ? `${props.deliveryId}.initial` : newId('event');
  const message: DeliveryRequested = { event_id: eventId, delivery_id: props.deliveryId, trigger: props.trigger };
  const subject = nats.names.subject(SUBJECTS.deliveryRequested);
  const attributes = {
    'messaging.system': 'nats',
    'messaging.destination.name': subject,
    'messaging.message.id': eventId,
    'intake.webhook.delivery_id': props.deliveryId,
  };
  // A failed publish marks the PRODUCER span failed (with the exception) before going on up.
  await inActiveSpan(tracer, `${subject} publish`, { kind: SpanKind.PRODUCER, attributes }, async () => {
    await nats.js.publish(subject, JSON.stringify(message), {
      msgID: eventId,
      headers: toNatsHeaders(currentTraceHeaders()),
      timeout: 5000,
    });
  });
}

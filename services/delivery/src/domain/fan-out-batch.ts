import { newId, requestDelivery, type SubmissionEvent } from '@intake/shared';
import { findFanOutTargets, formKey, insertDeliveriesOfSubmissions } from '../repositories/fan-out-batch.repository';
import { submissionData, type FanOutDeps } from './fan-out';
import { requestNotification } from './notify';

/**
 * Fans out the events that arrived together: one query for the webhooks and notification addresses
 * of their forms (spam has neither), one statement for all their deliveries (one per enabled webhook
 * of each form), then one `delivery.requested` per delivery still waiting for its first attempt and
 * one `delivery.notification` per submission of a form with addresses (a redelivered event finds its
 * deliveries there and only republishes, which the stream deduplicates; the mail, by its
 * `notifications` row, is sent once). Returns how many delivery requests were published.
 */
export async function fanOutSubmissions(props: FanOutDeps & { events: SubmissionEvent[]; now: Date }): Promise<number> {
  const { db, nats, now } = props;
  const events = props.events.filter((e) => e.status === 'received');
  const targets = await findFanOutTargets(db, events);
  if (targets.size === 0) return 0;
  const rows = events.flatMap((event) => {
    const hooks = targets.get(formKey(event))?.webhookIds ?? [];
    if (hooks.length === 0) return [];
    const data = submissionData({ event, config: props.config, secrets: props.secrets, now });
    return hooks.map((webhookId) => ({
      id: newId('delivery', now.getTime()),
      account_id: event.account_id,
      webhook_id: webhookId,
      form_id: event.form_id,
      submission_id: event.submission_id,
      data,
    }));
  });
  const mails = events.flatMap((event) => {
    const to = targets.get(formKey(event))?.notifyEmails ?? [];
    return to.length > 0 ? [{ event, to }] : [];
  });
  const pending = await insertDeliveriesOfSubmissions(db, rows);
  await Promise.all([
    ...pending.map((d) => requestDelivery(nats, { deliveryId: d.id, trigger: 'schedule' })),
    ...mails.map((mail) => requestNotification(nats, mail)),
  ]);
  return pending.length;
}

/** `fanOutSubmissions` for one event (a consumer handling its messages one by one). */
export function fanOutSubmission(props: FanOutDeps & { event: SubmissionEvent; now: Date }): Promise<number> {
  const { event, ...deps } = props;
  return fanOutSubmissions({ ...deps, events: [event] });
}

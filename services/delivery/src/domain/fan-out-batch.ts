import { newId, requestDelivery, type SubmissionEvent } from '@intake/shared';
import { findEnabledWebhooksOfForms, insertDeliveriesOfSubmissions } from '../repositories/fan-out-batch.repository';
import { submissionData, type FanOutDeps } from './fan-out';

/**
 * Fans out the events that arrived together: one query for the webhooks of their forms (spam has
 * none), one statement for all their deliveries (one per enabled webhook of each form), then one
 * `delivery.requested` per delivery still waiting for its first attempt (a redelivered event
 * finds its deliveries there and only republishes, which the stream deduplicates). Returns how
 * many requests were published.
 */
export async function fanOutSubmissions(props: FanOutDeps & { events: SubmissionEvent[]; now: Date }): Promise<number> {
  const { db, now } = props;
  const events = props.events.filter((e) => e.status === 'received');
  const forms = new Map(
    events.map((e) => [`${e.account_id} ${e.form_id}`, { accountId: e.account_id, formId: e.form_id }]),
  );
  const webhooks = await findEnabledWebhooksOfForms(db, [...forms.values()]);
  if (webhooks.length === 0) return 0;
  const byForm = new Map<string, string[]>();
  for (const w of webhooks)
    byForm.set(`${w.account_id} ${w.form_id}`, [...(byForm.get(`${w.account_id} ${w.form_id}`) ?? []), w.id]);
  const rows = events.flatMap((event) => {
    const hooks = byForm.get(`${event.account_id} ${event.form_id}`) ?? [];
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
  const pending = await insertDeliveriesOfSubmissions(db, rows);
  await Promise.all(pending.map((d) => requestDelivery(props.nats, { deliveryId: d.id, trigger: 'schedule' })));
  return pending.length;
}

/** `fanOutSubmissions` for one event (a consumer handling its messages one by one). */
export function fanOutSubmission(props: FanOutDeps & { event: SubmissionEvent; now: Date }): Promise<number> {
  const { event, ...deps } = props;
  return fanOutSubmissions({ ...deps, events: [event] });
}

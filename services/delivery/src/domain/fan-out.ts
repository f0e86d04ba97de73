import { type Config, type Db, type SecretBox } from '@intake/shared/base';
import { newId, type FormProject, type SubmissionEvent } from '@intake/shared/contracts';
import { type Within, type Nats } from '@intake/shared/messaging';
import { deliveryRequest, publishTraced } from '@intake/shared/webhooks';
import { fileDownloadUrl } from '@intake/shared/http';
import { findFanOutTargets, formKey, insertDeliveriesOfSubmissions } from '../repositories/fan-out-batch.repository';
import { mailRecipients, notificationRequest } from './notify';
import { insertOwnerNotifications } from '../repositories/notification.repository';

/** What fanning out needs of the platform. */
export interface FanOutDeps {
  db: Db;
  nats: Nats;
  config: Pick<Config, 'PUBLIC_BASE_URL' | 'RECONCILE_AFTER'>;
  secrets: SecretBox;
}

/**
 * The envelope `data` of a submission.created delivery: the spec's fields, the form's project (`{ id, name }`, null in
 * the account's default project) and the files with signed download links.
 */
export function submissionData(props: {
  event: SubmissionEvent;
  project: FormProject;
  config: Pick<Config, 'PUBLIC_BASE_URL'>;
  secrets: SecretBox;
  now: Date;
}): Record<string, unknown> {
  const { event } = props;
  return {
    submission_id: event.submission_id,
    form_id: event.form_id,
    project: props.project,
    payload: event.payload,
    files: event.files.map((f) => ({
      id: f.id,
      field: f.field,
      filename: f.filename,
      content_type: f.content_type,
      size: f.size,
      url: fileDownloadUrl({ config: props.config, secrets: props.secrets, fileId: f.id, now: props.now }),
    })),
  };
}

/** An event to fan out, and (from the consumer) the trace its publishes join. */
export interface EventToFanOut {
  event: SubmissionEvent;
  within?: Within;
}

/**
 * Fans out the events that arrived together: one query for the webhooks and notification addresses
 * of their forms (spam has neither), one statement for all their deliveries (one per enabled webhook
 * of each form), then one `delivery.requested` per delivery still waiting for its first attempt and
 * one `delivery.notification` per submission of a form with addresses (and one more for its
 * autoresponse when the form has one enabled), published as one batch, each message in its event's
 * trace (a redelivered event finds its deliveries there and only republishes, which the stream
 * deduplicates; the mail, by its `notifications` row, is sent once). Returns how many delivery
 * requests were published.
 */
export async function fanOutSubmissions(
  props: FanOutDeps & {
    events: EventToFanOut[];
    now: Date;
    /** Of a submission's enabled webhooks, the ones to fan out to (the submission reconciler's); all when absent. */
    webhooksOf?: (submissionId: string) => readonly string[];
  },
): Promise<number> {
  const { db, nats, now } = props;
  const items = props.events.filter(({ event }) => event.status === 'received');
  const targets = await findFanOutTargets(
    db,
    items.map(({ event }) => event),
  );
  if (targets.size === 0) return 0;
  const rows = items.flatMap(({ event }) => {
    const target = targets.get(formKey(event));
    const enabled = target?.webhookIds ?? [];
    const only = props.webhooksOf?.(event.submission_id);
    const hooks = only ? enabled.filter((id) => only.includes(id)) : enabled;
    if (hooks.length === 0) return [];
    const project = target?.project ?? null;
    const data = submissionData({ event, project, config: props.config, secrets: props.secrets, now });
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
  // The owners' mail rows before their requests, so a request lost on its way leaves a row the pump finds.
  const mails = items.flatMap(({ event }) => {
    const to = mailRecipients(targets.get(formKey(event))?.notifyEmails ?? []);
    return to.length > 0 ? [{ event, to }] : [];
  });
  await insertOwnerNotifications(
    db,
    mails.map(({ event, to }) => ({ accountId: event.account_id, submissionId: event.submission_id, recipients: to })),
    { recheckMs: props.config.RECONCILE_AFTER, now },
  );
  const bySubmission = new Map(items.map((item) => [item.event.submission_id, item]));
  const within = (submissionId: string): Within => bySubmission.get(submissionId)?.within ?? ((work) => work());
  // One batch for all of them, each message in its event's trace.
  await publishTraced(nats, [
    ...pending.map((d) =>
      deliveryRequest(
        { deliveryId: d.id, trigger: 'schedule', target: { webhookId: d.webhook_id, accountId: d.account_id } },
        within(d.submission_id),
      ),
    ),
    ...mails.map(({ event, to }) => notificationRequest({ event, to }, within(event.submission_id))),
    ...items.flatMap(({ event }) => {
      const settings = targets.get(formKey(event))?.autoresponse;
      return settings
        ? [notificationRequest({ event, to: [], autoresponse: settings }, within(event.submission_id))]
        : [];
    }),
  ]);
  return pending.length;
}

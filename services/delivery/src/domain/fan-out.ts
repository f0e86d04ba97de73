import {
  fileDownloadUrl,
  newId,
  requestDelivery,
  type Config,
  type Db,
  type Nats,
  type SecretBox,
  type SubmissionEvent,
} from '@intake/shared';
import { findEnabledWebhooksOfForm, insertSubmissionDeliveries } from '../repositories/delivery.repository';

/** What fanning out needs of the platform. */
export interface FanOutDeps {
  db: Db;
  nats: Nats;
  config: Pick<Config, 'PUBLIC_BASE_URL'>;
  secrets: SecretBox;
}

/** The envelope `data` of a submission.created delivery: the spec's fields plus the files with signed download links. */
export function submissionData(props: {
  event: SubmissionEvent;
  config: Pick<Config, 'PUBLIC_BASE_URL'>;
  secrets: SecretBox;
  now: Date;
}): Record<string, unknown> {
  const { event } = props;
  return {
    submission_id: event.submission_id,
    form_id: event.form_id,
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

/**
 * One delivery per enabled webhook of the form, then one `delivery.requested` per delivery still
 * waiting for its first attempt. A redelivered event finds its deliveries already there (unique
 * per webhook and submission) and only republishes, which the stream deduplicates.
 */
export async function fanOutSubmission(props: FanOutDeps & { event: SubmissionEvent; now: Date }): Promise<number> {
  const { db, event } = props;
  if (event.status !== 'received') return 0;
  const webhooks = await findEnabledWebhooksOfForm(db, event.account_id, event.form_id);
  if (webhooks.length === 0) return 0;
  const data = submissionData(props);
  const pending = await insertSubmissionDeliveries(
    db,
    webhooks.map((w) => ({
      id: newId('delivery', props.now.getTime()),
      account_id: event.account_id,
      webhook_id: w.id,
      form_id: event.form_id,
      submission_id: event.submission_id,
      data,
    })),
  );
  await Promise.all(pending.map((d) => requestDelivery(props.nats, { deliveryId: d.id, trigger: 'schedule' })));
  return pending.length;
}

import type { Queryable } from '../base/db';
import { newId } from '../contracts/ids';
import type { SecretBox } from '../base/secrets';
import type { DeliveryRow, DeliveryStatus } from '../webhooks/deliveries';
import { generateWebhookSecret } from '../webhooks/signed-request';
import { isChatFormat, shownChatUrl, type WebhookFormat } from '../webhooks/chat';

/**
 * Factories for webhooks and deliveries, built as the product builds them: a webhook's secret is
 * a real `whsec_…` secret sealed with the platform's SecretBox (so the sender can open and sign
 * with it); a delivery is a `pending` row as the delivery service inserts one (its record.repository.ts), then
 * moved to the state a test needs.
 */
export const webhookFactories = {
  /** A webhook on the form; returns its id and its plain secret (what the owner was shown once). */
  async webhook(
    platform: { db: Queryable; secrets: SecretBox },
    props: { accountId: string; formId: string; url?: string; enabled?: boolean; format?: WebhookFormat },
  ): Promise<{ id: string; secret: string; url: string }> {
    const id = newId('webhook');
    const secret = generateWebhookSecret();
    const url = props.url ?? 'https://hooks.example.com/intake';
    await platform.db('webhooks').insert({
      id,
      account_id: props.accountId,
      form_id: props.formId,
      // A chat webhook's URL sealed as management stores it, only what may be shown in `url`.
      ...(props.format && isChatFormat(props.format)
        ? { url: shownChatUrl(url), credential: platform.secrets.seal(url) }
        : { url }),
      enabled: props.enabled ?? true,
      format: props.format ?? 'standard',
      secret: platform.secrets.seal(secret),
    });
    return { id, secret, url };
  },

  /**
   * A delivery of the webhook: a `webhook.test` one by default, a `submission.created` one when
   * `submissionId` is given. `status`, `attemptCount` and `createdAt` set the state a test starts from.
   */
  async delivery(
    db: Queryable,
    props: {
      accountId: string;
      webhookId: string;
      formId: string;
      submissionId?: string;
      data?: Record<string, unknown>;
      status?: DeliveryStatus;
      attemptCount?: number;
      createdAt?: Date;
    },
  ): Promise<Pick<DeliveryRow, 'id'>> {
    const id = newId('delivery', props.createdAt?.getTime());
    const now = props.createdAt ?? new Date();
    const data = props.data ?? (props.submissionId ? { submission_id: props.submissionId, form_id: props.formId } : {});
    await db('deliveries').insert({
      id,
      account_id: props.accountId,
      webhook_id: props.webhookId,
      form_id: props.formId,
      submission_id: props.submissionId ?? null,
      event_type: props.submissionId ? 'submission.created' : 'webhook.test',
      data: JSON.stringify(data),
      status: 'pending',
      created_at: now,
      updated_at: now,
    });
    if (props.status || props.attemptCount)
      await db('deliveries')
        .where({ id })
        .update({
          ...(props.status ? { status: props.status } : {}),
          ...(props.attemptCount ? { attempt_count: props.attemptCount } : {}),
        });
    return { id };
  },
};

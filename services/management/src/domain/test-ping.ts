import type { Agent } from 'undici';
import {
  insertDelivery,
  newId,
  recordAttempt,
  recordDeliveryAttempts,
  sendWebhook,
  type AttemptResult,
  type ChatTarget,
  type Config,
  type Db,
  type SecretBox,
} from '@intake/shared';

/**
 * The synchronous test ping: a `webhook.test` envelope `{ form_id, sample: true }`, signed and
 * sent exactly like a real delivery (same code), made once and not retried. It creates no
 * submission; it is kept in the webhook's delivery log as a `webhook.test` delivery with one
 * attempt (trigger `test`).
 */
export async function sendTestPing(props: {
  db: Db;
  secrets: SecretBox;
  agent: Agent;
  config: Pick<Config, 'WEBHOOK_TIMEOUT_MS' | 'WEBHOOK_ALLOW_PRIVATE_NETWORKS'>;
  webhook: { id: string; account_id: string; form_id: string; url: string; secret: string };
  /** How a chat-format webhook words the ping. */
  chat?: ChatTarget;
  now: Date;
}): Promise<AttemptResult & { deliveryId: string }> {
  const { db, webhook, now } = props;
  const deliveryId = newId('delivery', now.getTime());
  const data = { form_id: webhook.form_id, sample: true };
  await insertDelivery(db, {
    id: deliveryId,
    account_id: webhook.account_id,
    webhook_id: webhook.id,
    form_id: webhook.form_id,
    submission_id: null,
    event_type: 'webhook.test',
    data,
    now,
  });
  const result = await sendWebhook({
    agent: props.agent,
    url: webhook.url,
    webhookId: webhook.id,
    allowPrivateNetworks: props.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    timeoutMs: props.config.WEBHOOK_TIMEOUT_MS,
    type: 'webhook.test',
    deliveryId,
    data,
    attempt: 1,
    secret: props.secrets.open(webhook.secret),
    now,
    chat: props.chat,
  });
  await recordDeliveryAttempts(db, [
    {
      deliveryId,
      attempt: 1,
      trigger: 'test',
      result,
      status: result.ok ? 'succeeded' : 'failed',
      nextAttemptAt: null,
      now: new Date(now.getTime() + result.durationMs),
    },
  ]);
  // An attempt at a receiver like any other; not a delivery (intake.deliveries counts submissions' deliveries).
  recordAttempt({ outcome: result.outcome, seconds: result.durationMs / 1000, willRetry: false });
  return { ...result, deliveryId };
}

import {
  checkWebhookUrl,
  createWebhookAgent,
  generateWebhookSecret,
  newId,
  problem,
  type AttemptResult,
  type Config,
  type Db,
  type SecretBox,
} from '@intake/shared';
import { sendTestPing } from './test-ping';
import {
  deleteWebhookRow,
  findWebhook,
  formExists,
  insertWebhook,
  listWebhooksOfForm,
  updateWebhookRow,
  type WebhookRow,
} from '../repositories/webhook.repository';

interface Deps {
  db: Db;
  secrets: SecretBox;
  config: Pick<Config, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS' | 'WEBHOOK_TIMEOUT_MS'>;
  now: Date;
}

/** 422 unless the URL is an allowed webhook target (https, not inside our network). */
async function assertAllowedUrl(url: string, config: Deps['config']): Promise<void> {
  const refusal = await checkWebhookUrl(url, config.WEBHOOK_ALLOW_PRIVATE_NETWORKS);
  if (refusal)
    throw problem('validation-failed', `body/url ${refusal}`, { errors: [{ field: 'body/url', message: refusal }] });
}

async function findOr404(db: Db, accountId: string, id: string): Promise<WebhookRow> {
  const row = await findWebhook(db, accountId, id);
  if (!row) throw problem('not-found', `No webhook ${id}`);
  return row;
}

/** Creates a webhook on one of the account's forms; the new secret is returned this once and stored sealed. */
export async function createWebhook(
  props: Deps & { accountId: string; formId: string; url: string },
): Promise<WebhookRow & { plainSecret: string }> {
  const { db, accountId, formId, now } = props;
  if (!(await formExists(db, accountId, formId))) throw problem('not-found', `No form ${formId}`);
  await assertAllowedUrl(props.url, props.config);
  const plainSecret = generateWebhookSecret();
  const row = await insertWebhook(db, {
    id: newId('webhook', now.getTime()),
    account_id: accountId,
    form_id: formId,
    url: props.url,
    secret: props.secrets.seal(plainSecret),
    created_at: now,
    updated_at: now,
  });
  return { ...row, plainSecret };
}

export async function listWebhooks(props: { db: Db; accountId: string; formId: string }): Promise<WebhookRow[]> {
  if (!(await formExists(props.db, props.accountId, props.formId)))
    throw problem('not-found', `No form ${props.formId}`);
  return listWebhooksOfForm(props.db, props.accountId, props.formId);
}

/** Changes url and/or enabled; `rotate_secret: true` replaces the secret and returns the new one this once. */
export async function updateWebhook(
  props: Deps & {
    accountId: string;
    id: string;
    changes: { url?: string; enabled?: boolean; rotate_secret?: boolean };
  },
): Promise<WebhookRow & { plainSecret?: string }> {
  const { db, accountId, id, changes } = props;
  await findOr404(db, accountId, id);
  if (changes.url !== undefined) await assertAllowedUrl(changes.url, props.config);
  const plainSecret = changes.rotate_secret ? generateWebhookSecret() : undefined;
  const row = await updateWebhookRow(db, accountId, id, {
    ...(changes.url !== undefined ? { url: changes.url } : {}),
    ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
    ...(plainSecret ? { secret: props.secrets.seal(plainSecret) } : {}),
    updated_at: props.now,
  });
  if (!row) throw problem('not-found', `No webhook ${id}`);
  return { ...row, plainSecret };
}

export async function deleteWebhook(props: { db: Db; accountId: string; id: string }): Promise<void> {
  if (!(await deleteWebhookRow(props.db, props.accountId, props.id)))
    throw problem('not-found', `No webhook ${props.id}`);
}

/** The synchronous test ping, through the same sender as the delivery worker's. */
export async function testWebhook(props: Deps & { accountId: string; id: string }): Promise<AttemptResult> {
  const webhook = await findOr404(props.db, props.accountId, props.id);
  const agent = createWebhookAgent({
    allowPrivateNetworks: props.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    timeoutMs: props.config.WEBHOOK_TIMEOUT_MS,
  });
  try {
    return await sendTestPing({
      db: props.db,
      secrets: props.secrets,
      agent,
      config: props.config,
      webhook,
      now: props.now,
    });
  } finally {
    await agent.close().catch(() => undefined);
  }
}

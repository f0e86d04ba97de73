import { type Config, type Db, type SecretBox } from '@intake/shared/base';
import { newId, problem } from '@intake/shared/contracts';
import { type Nats } from '@intake/shared/messaging';
import {
  checkWebhookUrl,
  generateWebhookSecret,
  requestTestPing,
  TEST_PING_SLOT_WAIT_MS,
  TestPingUnavailable,
  type TestPingAnswer,
  type WebhookFormat,
  isChatFormat,
  isIntegration,
} from '@intake/shared/webhooks';
import { fullUrl, storedUrl } from './chat-urls';
import { integrationSettings, type DestinationInput, type IntegrationSettings } from './integrations';
import { changedFields, type Audit, type Entry } from '../platform/audit-trail';
import { replayableWebhook } from './deliveries';
import {
  deleteWebhookRow,
  findWebhook,
  formExists,
  insertWebhook,
  listWebhooksOfForm,
  queueReplays,
  recentDeliveries,
  updateWebhookRow,
  type RecentDeliveries,
  type ReplayFilter,
  type WebhookRow,
} from './webhook.repository';

interface Deps {
  db: Db;
  secrets: SecretBox;
  config: Pick<Config, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS' | 'WEBHOOK_TIMEOUT_MS' | 'PUBLIC_BASE_URL'>;
  now: Date;
}

/** A webhook with its deliveries of the last 24 hours. */
export type WebhookWithHealth = WebhookRow & { recent: RecentDeliveries };

const DAY_MS = 86_400_000;

async function withHealth(db: Db, accountId: string, rows: WebhookRow[], now: Date): Promise<WebhookWithHealth[]> {
  const recent = await recentDeliveries(
    db,
    accountId,
    rows.map((r) => r.id),
    new Date(now.getTime() - DAY_MS),
  );
  return rows.map((r) => ({ ...r, recent: recent.get(r.id) ?? { succeeded: 0, failed: 0, pending: 0 } }));
}

/** 422 unless the URL is an allowed webhook target (https, not inside our network). */
async function assertAllowedUrl(url: string, config: Deps['config']): Promise<void> {
  const refusal = await checkWebhookUrl(url, config.WEBHOOK_ALLOW_PRIVATE_NETWORKS);
  if (refusal)
    throw problem('validation-failed', `body/url ${refusal}`, { errors: [{ field: 'body/url', message: refusal }] });
}

/** One target however it is spelt: `new URL` lower-cases the host and drops a default port. */
function sameTarget(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}

/** 409 conflict when another webhook of the form already sends to this URL (each would get every submission twice). */
async function assertNewTarget(
  props: { db: Db; secrets: SecretBox; accountId: string; formId: string; url: string },
  self?: string,
): Promise<void> {
  const { db, secrets, accountId, formId, url } = props;
  const same = (await listWebhooksOfForm(db, accountId, formId)).find(
    (w) => w.id !== self && sameTarget(fullUrl(w, secrets), url),
  );
  if (same) throw problem('conflict', `This form already has a webhook to this URL (${same.id})`);
}

async function findOr404(db: Db, accountId: string, id: string): Promise<WebhookRow> {
  const row = await findWebhook(db, accountId, id);
  if (!row) throw problem('not-found', `No webhook ${id}`);
  return row;
}

/** 422 for `field` of the body, which this kind of webhook does not take (`message`). */
function notTaken(field: string, message: string): never {
  throw problem('validation-failed', `body/${field} ${message}`, { errors: [{ field: `body/${field}`, message }] });
}

/**
 * Where a new webhook sends: its URL (checked as a target), or an integration's destination and credential (checked
 * as that integration takes them, its URL being the destination's page).
 */
async function targetOf(
  props: Deps & { url?: string; format: WebhookFormat; destination?: DestinationInput },
): Promise<{ url: string; integration?: IntegrationSettings }> {
  if (isIntegration(props.format)) {
    if (props.url !== undefined) notTaken('url', `is not taken by ${props.format}: it writes to its destination`);
    if (props.destination === undefined) notTaken('destination', `is required for ${props.format}`);
    const integration = integrationSettings(props.format, props.destination);
    return { url: integration.url, integration };
  }
  if (props.destination !== undefined) notTaken('destination', 'is only taken by google_sheets, airtable and notion');
  if (props.url === undefined) notTaken('url', 'is required');
  await assertAllowedUrl(props.url, props.config);
  return { url: props.url };
}

/**
 * Creates a webhook (or an integration) on one of the account's forms; the new secret is returned this once and
 * stored sealed, as is an integration's credential (never returned).
 */
export async function createWebhook(
  props: Deps & {
    audit: Audit;
    accountId: string;
    formId: string;
    url?: string;
    format?: WebhookFormat;
    destination?: DestinationInput;
  },
): Promise<WebhookWithHealth & { plainSecret?: string }> {
  const { db, accountId, formId, now } = props;
  if (!(await formExists(db, accountId, formId))) throw problem('not-found', `No form ${formId}`);
  const format = props.format ?? 'standard';
  const { url, integration } = await targetOf({ ...props, format });
  await assertNewTarget({ ...props, url });
  const plainSecret = generateWebhookSecret();
  const row = await db.transaction(async (trx) => {
    const created = await insertWebhook(trx, {
      id: newId('webhook', now.getTime()),
      account_id: accountId,
      form_id: formId,
      format,
      secret: props.secrets.seal(plainSecret),
      destination: integration?.destination ?? null,
      ...(integration
        ? { url, credential: props.secrets.seal(integration.credential) }
        : storedUrl(format, url, props.secrets)),
      created_at: now,
      updated_at: now,
    });
    const target = { type: 'webhook', id: created.id };
    await props.audit.record(trx, { action: 'webhook.created', target, details: { form_id: formId, format } });
    return created;
  });
  // A chat message is not signed: its secret (kept for a later change to `standard`, which replaces it) is not shown.
  return { ...row, recent: { succeeded: 0, failed: 0, pending: 0 }, ...(isChatFormat(format) ? {} : { plainSecret }) };
}

export async function listWebhooks(props: {
  db: Db;
  accountId: string;
  formId: string;
  now: Date;
}): Promise<WebhookWithHealth[]> {
  if (!(await formExists(props.db, props.accountId, props.formId)))
    throw problem('not-found', `No form ${props.formId}`);
  const rows = await listWebhooksOfForm(props.db, props.accountId, props.formId);
  return withHealth(props.db, props.accountId, rows, props.now);
}

/** Webhook `id` of the account. */
type OneWebhook = { db: Db; accountId: string; id: string };

/** One webhook with its health. */
export async function getWebhook(props: OneWebhook & { now: Date }): Promise<WebhookWithHealth> {
  const row = await findOr404(props.db, props.accountId, props.id);
  const [withRecent] = await withHealth(props.db, props.accountId, [row], props.now);
  return withRecent!;
}

/**
 * Queues a replay of every matching delivery of a webhook (each once: one already waiting for its
 * replay is not counted again); the delivery service sends them at a bounded rate. `dryRun` counts.
 */
export async function replayWebhook(
  props: OneWebhook & { audit: Audit; filter: ReplayFilter; dryRun: boolean; now: Date },
): Promise<number> {
  await replayableWebhook(props.db, props.accountId, props.id, props.dryRun);
  return props.db.transaction(async (trx) => {
    const { accountId, id: webhookId, filter, now, dryRun } = props;
    const count = await queueReplays(trx, { accountId, webhookId, filter, now, dryRun });
    if (!dryRun)
      await props.audit.record(trx, {
        action: 'deliveries.replayed',
        target: { type: 'webhook', id: webhookId },
        details: { count, filter },
      });
    return count;
  });
}

/** What a change of a webhook may touch. */
export interface WebhookChanges {
  url?: string;
  enabled?: boolean;
  rotate_secret?: boolean;
  format?: WebhookFormat;
  destination?: DestinationInput;
}

/**
 * What a change does to where the webhook sends: a webhook's new URL checked as a target; an integration's
 * destination merged into the current one (a credential left out is kept). A webhook does not become an integration
 * or the other way round, nor an integration another tool's.
 */
async function changedTarget(
  props: Deps & { current: WebhookRow; changes: WebhookChanges },
): Promise<{ url?: string; integration?: IntegrationSettings }> {
  const { current, changes } = props;
  if (isIntegration(current.format)) {
    if (changes.format !== undefined && changes.format !== current.format)
      notTaken('format', `cannot change an integration (${current.format}): add another instead`);
    if (changes.url !== undefined) notTaken('url', `is not taken by ${current.format}: it writes to its destination`);
    if (changes.destination === undefined) return {};
    const integration = integrationSettings(current.format, changes.destination, {
      destination: current.destination!,
      credential: props.secrets.open(current.credential!),
    });
    return { url: integration.url, integration };
  }
  if (changes.format !== undefined && isIntegration(changes.format))
    notTaken('format', 'cannot make a webhook an integration: add the integration instead');
  if (changes.destination !== undefined) notTaken('destination', 'is only taken by google_sheets, airtable and notion');
  // A chat webhook's URL as shown, sent back unchanged (a form saved as it was), is no new URL.
  const url = isChatFormat(current.format) && changes.url === current.url ? undefined : changes.url;
  if (url !== undefined) await assertAllowedUrl(url, props.config);
  return url !== undefined ? { url } : {};
}

/**
 * How a webhook's new URL or format is stored: a chat webhook's URL sealed (chat-urls.ts), a standard one's in the
 * clear; nothing when neither changes.
 */
function storedChange(
  current: WebhookRow,
  changes: { url?: string; format?: WebhookFormat },
  secrets: SecretBox,
): { url?: string; credential?: string | null } {
  if (isIntegration(current.format) || (changes.url === undefined && changes.format === undefined)) return {};
  return storedUrl(changes.format ?? current.format, changes.url ?? fullUrl(current, secrets), secrets);
}

/**
 * Changes url, enabled, format or an integration's destination; `rotate_secret: true` replaces the secret and returns
 * the new one this once.
 */
export async function updateWebhook(
  props: Deps & { audit: Audit; accountId: string; id: string; changes: WebhookChanges },
): Promise<WebhookWithHealth & { plainSecret?: string }> {
  const { db, accountId, id, changes } = props;
  const current = await findOr404(db, accountId, id);
  const { url, integration } = await changedTarget({ ...props, current });
  if (url !== undefined)
    await assertNewTarget({ db, secrets: props.secrets, accountId, formId: current.form_id, url }, id);
  const plainSecret = newSecret(current, changes) ? generateWebhookSecret() : undefined;
  const row = await db.transaction(async (trx) => {
    const updated = await updateWebhookRow(trx, accountId, id, {
      ...(integration && url !== undefined
        ? { url }
        : storedChange(current, { url, format: changes.format }, props.secrets)),
      ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
      ...(changes.format !== undefined ? { format: changes.format } : {}),
      ...(integration
        ? { destination: integration.destination, credential: props.secrets.seal(integration.credential) }
        : {}),
      ...(plainSecret ? { secret: props.secrets.seal(plainSecret) } : {}),
      updated_at: props.now,
    });
    if (!updated) throw problem('not-found', `No webhook ${id}`);
    await props.audit.record(trx, ...webhookChanges(id, changes));
    return updated;
  });
  const [withRecent] = await withHealth(db, accountId, [row], props.now);
  return { ...withRecent!, plainSecret };
}

/**
 * Whether a change gives the webhook a new secret: a rotation, or a chat webhook made `standard` (its owner never saw
 * the secret it had). A chat webhook's messages are unsigned, so it has none to rotate.
 */
function newSecret(current: WebhookRow, changes: WebhookChanges): boolean {
  const format = changes.format ?? current.format;
  if (changes.rotate_secret && isChatFormat(format))
    notTaken('rotate_secret', `is not taken by a ${format} webhook: its messages are not signed`);
  return changes.rotate_secret === true || (isChatFormat(current.format) && format === 'standard');
}

/** The audit entries of a webhook's change: what changed (by name), and the secret's rotation apart. */
function webhookChanges(id: string, changes: { rotate_secret?: boolean }): Entry[] {
  const target = { type: 'webhook', id };
  const { rotate_secret: rotate, ...rest } = changes;
  return [
    ...(Object.keys(rest).length > 0
      ? [{ action: 'webhook.updated' as const, target, details: changedFields(rest) }]
      : []),
    ...(rotate === true ? [{ action: 'webhook.secret_rotated' as const, target }] : []),
  ];
}

export async function deleteWebhook(props: OneWebhook & { audit: Audit }): Promise<void> {
  await props.db.transaction(async (trx) => {
    // Written first, so the entry finds the webhook's project; a webhook that is not there takes it back.
    await props.audit.record(trx, { action: 'webhook.deleted', target: { type: 'webhook', id: props.id } });
    if (!(await deleteWebhookRow(trx, props.accountId, props.id))) throw problem('not-found', `No webhook ${props.id}`);
  });
}

/** How long a test ping may take beyond its attempt's time-out: its wait for a send slot, and a margin. */
const TEST_PING_MARGIN_MS = TEST_PING_SLOT_WAIT_MS + 2_000;

/**
 * The synchronous test ping, made by a delivery process through the path every attempt takes (requestTestPing): 404
 * for a webhook the account does not have, 503 with `Retry-After` when no delivery process answers.
 */
export async function testWebhook(
  props: Deps & { nats: Nats; audit: Audit; accountId: string; id: string },
): Promise<TestPingResult> {
  await findOr404(props.db, props.accountId, props.id);
  let answer;
  try {
    answer = await requestTestPing(
      props.nats,
      { account_id: props.accountId, webhook_id: props.id },
      props.config.WEBHOOK_TIMEOUT_MS + TEST_PING_MARGIN_MS,
    );
  } catch (err) {
    if (!(err instanceof TestPingUnavailable)) throw err;
    throw problem(
      'service-unavailable',
      'No delivery process answered the test ping; try again shortly',
      {},
      { 'Retry-After': '5' },
    );
  }
  if ('not_found' in answer) throw problem('not-found', `No webhook ${props.id}`);
  await props.audit.record(props.db, { action: 'webhook.tested', target: { type: 'webhook', id: props.id } });
  return answer;
}

/** What the endpoint answered a test ping. */
export type TestPingResult = Exclude<TestPingAnswer, { not_found: true }>;

import type { Queryable } from '@intake/shared/base';
import type { ProjectColumns } from '@intake/shared/contracts';
import type { Destination, WebhookFormat } from '@intake/shared/webhooks';

export interface WebhookRow {
  id: string;
  account_id: string;
  form_id: string;
  url: string;
  enabled: boolean;
  format: WebhookFormat;
  /** Why it was disabled by Intake (`failing`); null when enabled or disabled by its owner. */
  disabled_reason: 'failing' | null;
  /** Sealed with SECRETS_KEY (platform.secrets); never presented. */
  secret: string;
  /** An integration's destination (no credential in it); null for a webhook. */
  destination: Destination | null;
  /**
   * Sealed with SECRETS_KEY, never presented: an integration's credential, or a chat webhook's whole URL (its `url`
   * then holds only what may be shown). Null for a standard webhook.
   */
  credential: string | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  failing_since: Date | null;
  consecutive_failures: number;
  created_at: Date;
  updated_at: Date;
}

/** A webhook's deliveries of the last 24 hours, by how they stand. */
export interface RecentDeliveries {
  succeeded: number;
  failed: number;
  pending: number;
}

// Webhook rows, always scoped by account.

export async function formExists(db: Queryable, accountId: string, formId: string): Promise<boolean> {
  return Boolean(await db('forms').where({ account_id: accountId, id: formId }).whereNull('deleted_at').first('id'));
}

type HealthColumns =
  'enabled' | 'disabled_reason' | 'last_success_at' | 'last_failure_at' | 'failing_since' | 'consecutive_failures';

/** A form's name and its project's columns (`formProject` makes its client of them); undefined when it is gone. */
export async function findFormNames(
  db: Queryable,
  accountId: string,
  formId: string,
): Promise<({ name: string } & ProjectColumns) | undefined> {
  return db('forms as f')
    .leftJoin('projects as p', 'p.id', 'f.project_id')
    .where({ 'f.account_id': accountId, 'f.id': formId })
    .whereNull('f.deleted_at')
    .first('f.name', 'p.id as project_id', 'p.name as project_name', 'p.is_default as project_is_default');
}

export async function insertWebhook(db: Queryable, row: Omit<WebhookRow, HealthColumns>): Promise<WebhookRow> {
  const [created] = await db('webhooks').insert(row).returning('*');
  return created as WebhookRow;
}

export async function listWebhooksOfForm(db: Queryable, accountId: string, formId: string): Promise<WebhookRow[]> {
  return db('webhooks')
    .where({ account_id: accountId, form_id: formId })
    .orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ])
    .select('*');
}

export async function findWebhook(db: Queryable, accountId: string, id: string): Promise<WebhookRow | undefined> {
  return db('webhooks').where({ account_id: accountId, id }).first('*');
}

export async function updateWebhookRow(
  db: Queryable,
  accountId: string,
  id: string,
  changes: Partial<
    Pick<WebhookRow, 'url' | 'enabled' | 'secret' | 'format' | 'destination' | 'credential' | 'updated_at'>
  >,
): Promise<WebhookRow | undefined> {
  // Enabled again by its owner: the failing streak and the reason it was disabled are forgotten.
  const reenable =
    changes.enabled === true
      ? { disabled_reason: null, failing_since: null, consecutive_failures: 0, alerted_at: null }
      : {};
  const [row] = await db('webhooks')
    .where({ account_id: accountId, id })
    .update({ ...changes, ...reenable })
    .returning('*');
  return row as WebhookRow | undefined;
}

/** The deliveries made since `since` of these webhooks, by state (pending covering retrying), by webhook id. */
export async function recentDeliveries(
  db: Queryable,
  accountId: string,
  webhookIds: string[],
  since: Date,
): Promise<Map<string, RecentDeliveries>> {
  if (webhookIds.length === 0) return new Map();
  const rows: { webhook_id: string; succeeded: number; failed: number; pending: number }[] = await db('deliveries')
    .where({ account_id: accountId })
    .whereIn('webhook_id', webhookIds)
    .where('created_at', '>=', since)
    .groupBy('webhook_id')
    .select(
      'webhook_id',
      db.raw(`count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded`),
      db.raw(`count(*) FILTER (WHERE status = 'failed')::int AS failed`),
      db.raw(`count(*) FILTER (WHERE status IN ('pending', 'retrying'))::int AS pending`),
    );
  return new Map(rows.map(({ webhook_id, ...counts }) => [webhook_id, counts]));
}

/** Which of a webhook's deliveries a bulk replay takes. */
export interface ReplayFilter {
  status?: 'failed';
  since?: Date;
  until?: Date;
}

function replayable(db: Queryable, accountId: string, webhookId: string, filter: ReplayFilter) {
  return db('deliveries')
    .where({ account_id: accountId, webhook_id: webhookId, event_type: 'submission.created' })
    .whereNull('replay_queued_at')
    .modify((q) => {
      if (filter.status) q.where({ status: filter.status });
      if (filter.since) q.where('created_at', '>=', filter.since);
      if (filter.until) q.where('created_at', '<', filter.until);
    });
}

/**
 * Marks the matching deliveries (not already waiting for a replay) for one; the delivery service's
 * pump sends them. Answers how many were marked; `dryRun` only counts them.
 */
export async function queueReplays(
  db: Queryable,
  props: { accountId: string; webhookId: string; filter: ReplayFilter; now: Date; dryRun: boolean },
): Promise<number> {
  const query = replayable(db, props.accountId, props.webhookId, props.filter);
  if (props.dryRun) {
    const [row] = await query.count<{ count: string }[]>('* as count');
    return Number(row?.count ?? 0);
  }
  return query.update({ replay_queued_at: props.now });
}

export async function deleteWebhookRow(db: Queryable, accountId: string, id: string): Promise<boolean> {
  return (await db('webhooks').where({ account_id: accountId, id }).delete()) > 0;
}

/** Chat webhooks whose URL is not sealed yet, across accounts (the management process's upkeep). */
export async function chatWebhooksInTheClear(db: Queryable): Promise<Pick<WebhookRow, 'id' | 'url' | 'format'>[]> {
  return db('webhooks')
    .whereIn('format', ['slack', 'discord', 'teams'])
    .whereNull('credential')
    .select('id', 'url', 'format');
}

/** Stores a chat webhook's URL sealed, unless it changed meanwhile (`url` is still the one that was sealed). */
export async function sealChatUrl(
  db: Queryable,
  id: string,
  was: string,
  stored: { url: string; credential: string | null },
): Promise<void> {
  await db('webhooks').where({ id, url: was }).whereNull('credential').update(stored);
}

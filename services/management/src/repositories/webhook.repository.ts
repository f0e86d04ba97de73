import type { Queryable } from '@intake/shared';

export interface WebhookRow {
  id: string;
  account_id: string;
  form_id: string;
  url: string;
  enabled: boolean;
  /** Sealed with SECRETS_KEY (platform.secrets); never presented. */
  secret: string;
  created_at: Date;
  updated_at: Date;
}

// Webhook rows, always scoped by account.

export async function formExists(db: Queryable, accountId: string, formId: string): Promise<boolean> {
  return Boolean(await db('forms').where({ account_id: accountId, id: formId }).first('id'));
}

export async function insertWebhook(db: Queryable, row: Omit<WebhookRow, 'enabled'>): Promise<WebhookRow> {
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
  changes: Partial<Pick<WebhookRow, 'url' | 'enabled' | 'secret' | 'updated_at'>>,
): Promise<WebhookRow | undefined> {
  const [row] = await db('webhooks').where({ account_id: accountId, id }).update(changes).returning('*');
  return row as WebhookRow | undefined;
}

export async function deleteWebhookRow(db: Queryable, accountId: string, id: string): Promise<boolean> {
  return (await db('webhooks').where({ account_id: accountId, id }).delete()) > 0;
}

import type { Knex } from 'knex';

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

/** Webhook rows, always scoped by account. */
export const webhookRepository = {
  async formExists(db: Knex, accountId: string, formId: string): Promise<boolean> {
    return Boolean(await db('forms').where({ account_id: accountId, id: formId }).first('id'));
  },

  async insert(db: Knex, row: Omit<WebhookRow, 'enabled'>): Promise<WebhookRow> {
    const [created] = await db('webhooks').insert(row).returning('*');
    return created as WebhookRow;
  },

  async listForForm(db: Knex, accountId: string, formId: string): Promise<WebhookRow[]> {
    return db('webhooks')
      .where({ account_id: accountId, form_id: formId })
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
      .select('*');
  },

  async find(db: Knex, accountId: string, id: string): Promise<WebhookRow | undefined> {
    return db('webhooks').where({ account_id: accountId, id }).first('*');
  },

  async update(
    db: Knex,
    accountId: string,
    id: string,
    changes: Partial<Pick<WebhookRow, 'url' | 'enabled' | 'secret' | 'updated_at'>>,
  ): Promise<WebhookRow | undefined> {
    const [row] = await db('webhooks').where({ account_id: accountId, id }).update(changes).returning('*');
    return row as WebhookRow | undefined;
  },

  async remove(db: Knex, accountId: string, id: string): Promise<boolean> {
    return (await db('webhooks').where({ account_id: accountId, id }).delete()) > 0;
  },
};

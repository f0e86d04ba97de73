import type { Knex } from 'knex';

/**
 * Saved views: an inbox's filters kept under a name, per form, shared by everyone in the account. `filters`
 * is the console's own form of them (the view, days, search, order), never submission data.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE IF NOT EXISTS saved_views (
    id text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    form_id text NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    name text NOT NULL,
    -- not a payload: a view's named filters (status, since, until, q, order), whose order means nothing
    filters jsonb NOT NULL,
    created_by text,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    UNIQUE (form_id, name)
  )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS saved_views');
}

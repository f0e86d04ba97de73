import type { Knex } from 'knex';

/**
 * Submitted fields keep the order they were posted in. jsonb sorts object keys, so the payload
 * columns that reach owners (the stored submission, the event that carries it, the webhook
 * envelope data) become json, which keeps the text as written. Rows written before keep the
 * jsonb order they already had.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE submissions ALTER COLUMN payload TYPE json USING payload::json');
  await knex.raw('ALTER TABLE outbox ALTER COLUMN payload TYPE json USING payload::json');
  await knex.raw('ALTER TABLE deliveries ALTER COLUMN data TYPE json USING data::json');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE submissions ALTER COLUMN payload TYPE jsonb USING payload::jsonb');
  await knex.raw('ALTER TABLE outbox ALTER COLUMN payload TYPE jsonb USING payload::jsonb');
  await knex.raw('ALTER TABLE deliveries ALTER COLUMN data TYPE jsonb USING data::jsonb');
}

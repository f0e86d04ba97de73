import type { Knex } from 'knex';

/**
 * submissions.read_at: when the owner first opened (or marked read) a submission; null is unread. Existing
 * submissions start unread, as do new ones (ingest does not write the column).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE submissions ADD COLUMN IF NOT EXISTS read_at timestamptz(3)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE submissions DROP COLUMN IF EXISTS read_at');
}

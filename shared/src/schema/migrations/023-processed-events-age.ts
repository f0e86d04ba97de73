import type { Knex } from 'knex';

/**
 * The retention sweep deletes processed-event marks older than 8 days, in batches: without an index on their age
 * each batch, and every sweep that finds none, read the whole table (a week of every event). Built CONCURRENTLY, so
 * the usage consumer keeps writing while it is built; an invalid index a failed build left is dropped and built again.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  const valid = await knex.raw<{ rows: { valid: boolean }[] }>(
    `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass('processed_events_processed_at_idx')`,
  );
  if (valid.rows[0]?.valid === false) await knex.raw('DROP INDEX CONCURRENTLY processed_events_processed_at_idx');
  await knex.raw(
    'CREATE INDEX CONCURRENTLY IF NOT EXISTS processed_events_processed_at_idx ON processed_events (processed_at)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS processed_events_processed_at_idx');
}

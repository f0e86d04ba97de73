import type { Knex } from 'knex';

/**
 * What the dashboards read without scanning submissions: the unread ones per form (a partial index of received
 * submissions out of the trash that nobody opened, counted up to a cap), and usage per account and day (the charts'
 * totals over 30 or 90 days, whatever the number of forms). CONCURRENTLY: ingest keeps writing while this runs.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS submissions_unread_idx ON submissions (form_id)
     WHERE read_at IS NULL AND status = 'received' AND deleted_at IS NULL`,
  );
  await knex.raw('CREATE INDEX CONCURRENTLY IF NOT EXISTS usage_daily_day_idx ON usage_daily (account_id, day)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS usage_daily_day_idx');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS submissions_unread_idx');
}

import type { Knex } from 'knex';

/** Usage: GET /v1/usage sums the account's stored file bytes; the quota-warning sender looks for pending rows. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX IF NOT EXISTS submission_files_account_idx ON submission_files (account_id)');
  await knex.raw(
    `CREATE INDEX IF NOT EXISTS notifications_pending_idx ON notifications (created_at) WHERE status = 'pending'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS notifications_pending_idx');
  await knex.raw('DROP INDEX IF EXISTS submission_files_account_idx');
}

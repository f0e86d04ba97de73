import type { Knex } from 'knex';

/**
 * notifications.status gets one vocabulary and a constraint that holds it (delivery used to write
 * `retrying` where usage wrote `pending`), and `claimed_at` for the quota-warning sender's claim.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`UPDATE notifications SET status = 'pending' WHERE status = 'retrying'`);
  await knex.raw(`ALTER TABLE notifications ADD COLUMN IF NOT EXISTS claimed_at timestamptz(3)`);
  await knex.raw('ALTER TABLE notifications DROP CONSTRAINT IF EXISTS notifications_status_check');
  await knex.raw(
    `ALTER TABLE notifications ADD CONSTRAINT notifications_status_check
     CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'skipped'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE notifications DROP CONSTRAINT IF EXISTS notifications_status_check');
  await knex.raw('ALTER TABLE notifications DROP COLUMN IF EXISTS claimed_at');
}

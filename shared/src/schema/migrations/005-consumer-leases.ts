import type { Knex } from 'knex';

/**
 * Leases: the process making a webhook attempt or sending a notification e-mail holds the row
 * until `lease_until` (database time), so a redelivered copy of the same message handled
 * elsewhere meanwhile does not send it again. Recording the outcome clears it; a process that
 * dies mid-attempt leaves it to expire, and the redelivered message then makes the attempt.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deliveries ADD COLUMN lease_until timestamptz(3)');
  await knex.raw('ALTER TABLE notifications ADD COLUMN lease_until timestamptz(3)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE notifications DROP COLUMN lease_until');
  await knex.raw('ALTER TABLE deliveries DROP COLUMN lease_until');
}

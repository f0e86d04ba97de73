import type { Knex } from 'knex';

/**
 * The outbox relay deletes a row in the transaction that publishes it, instead of marking it
 * published and leaving it for a sweeper: one write per event instead of an update (which also
 * rewrote every index entry) and a later delete. Rows already published go now.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('DELETE FROM outbox WHERE published_at IS NOT NULL');
  await knex.raw('DROP INDEX IF EXISTS outbox_unpublished_idx');
  await knex.raw('ALTER TABLE outbox DROP COLUMN published_at');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE outbox ADD COLUMN published_at timestamp(3) with time zone');
  await knex.raw('CREATE INDEX outbox_unpublished_idx ON outbox (seq) WHERE published_at IS NULL');
}

import type { Knex } from 'knex';

/**
 * The replay pump takes queued replays account by account in turns (one account's replay of thousands never holds
 * back another's of five): it finds the accounts with replays waiting by skipping along this index, then each
 * account's oldest. The index holds only queued deliveries, so it stays as small as the queue.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  const valid = await knex.raw<{ rows: { valid: boolean }[] }>(
    `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass('deliveries_replay_turns_idx')`,
  );
  if (valid.rows[0]?.valid === false) await knex.raw('DROP INDEX CONCURRENTLY deliveries_replay_turns_idx');
  await knex.raw(
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS deliveries_replay_turns_idx ON deliveries (account_id, replay_queued_at, id)
     WHERE replay_queued_at IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_replay_turns_idx');
}

import type { Knex } from 'knex';

/**
 * What the purge removed and has not yet written to the audit log, per account: each batch adds its count in the
 * transaction that removes it, and the end of a run moves every account's tally into one `submissions.purged` entry
 * and clears it in one transaction. A run killed halfway leaves its tally here for the next run's entry, so nothing
 * removed goes unaudited and nothing is audited twice.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE purge_tally (
    account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    retention bigint NOT NULL DEFAULT 0,
    spam bigint NOT NULL DEFAULT 0,
    delivered bigint NOT NULL DEFAULT 0,
    "left" bigint NOT NULL DEFAULT 0,
    since timestamptz(3) NOT NULL DEFAULT now())`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS purge_tally');
}

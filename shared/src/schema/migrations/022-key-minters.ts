import type { Knex } from 'knex';

/**
 * Who minted each API key: a member (their id and e-mail at the time), another key, or the operator's CLI. No foreign
 * key: the record outlives the member, which is the point (an admin's keys stay visible, and revocable, after they
 * are removed). Keys minted before this are of unknown origin (null).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE api_keys ADD COLUMN created_by_type text, ADD COLUMN created_by_id text,
    ADD COLUMN created_by_label text`);
  await knex.raw(`CREATE INDEX api_keys_created_by_idx ON api_keys (account_id, created_by_id)
    WHERE created_by_id IS NOT NULL AND revoked_at IS NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS api_keys_created_by_idx');
  await knex.raw(`ALTER TABLE api_keys DROP COLUMN IF EXISTS created_by_type, DROP COLUMN IF EXISTS created_by_id,
    DROP COLUMN IF EXISTS created_by_label`);
}

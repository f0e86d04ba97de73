import type { Knex } from 'knex';

/**
 * The trash: a deleted form or submission is kept `TRASH_DAYS` with `deleted_at` set, hidden from every read
 * but the trash's, and can be restored; management removes it for good after that. A form's submissions go with it
 * without marks of their own (their form's `deleted_at` hides them). The partial indexes find what the trash holds
 * and what is due, and are empty for almost every row; a nullable column without a default is added without a rewrite.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE forms ADD COLUMN IF NOT EXISTS deleted_at timestamptz(3)');
  await knex.raw('ALTER TABLE submissions ADD COLUMN IF NOT EXISTS deleted_at timestamptz(3)');
  // What the purge removed from the trash, audited with the rest of its tally.
  await knex.raw('ALTER TABLE purge_tally ADD COLUMN IF NOT EXISTS trash bigint NOT NULL DEFAULT 0');
  await knex.raw(
    `CREATE INDEX IF NOT EXISTS forms_trash_idx ON forms (account_id, deleted_at) WHERE deleted_at IS NOT NULL`,
  );
  await knex.raw(
    `CREATE INDEX IF NOT EXISTS submissions_trash_idx ON submissions (form_id, deleted_at) WHERE deleted_at IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE purge_tally DROP COLUMN IF EXISTS trash');
  await knex.raw('DROP INDEX IF EXISTS submissions_trash_idx');
  await knex.raw('DROP INDEX IF EXISTS forms_trash_idx');
  await knex.raw('ALTER TABLE submissions DROP COLUMN IF EXISTS deleted_at');
  await knex.raw('ALTER TABLE forms DROP COLUMN IF EXISTS deleted_at');
}

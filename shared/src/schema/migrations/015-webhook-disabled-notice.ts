import type { Knex } from 'knex';

/**
 * The e-mail that tells a form's addresses their webhook was disabled for failing is taken like the failing
 * alert (`alerted_at`): marked in the statement that takes it, cleared when the mail could not be sent, so the
 * next health sweep sends it again. Webhooks disabled before this migration count as told.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE webhooks ADD COLUMN disabled_notice_at timestamptz(3)`);
  await knex.raw(`UPDATE webhooks SET disabled_notice_at = updated_at WHERE disabled_reason = 'failing'`);
  // The sweep looks only for disabled webhooks whose notice is still due.
  await knex.raw(
    `CREATE INDEX webhooks_disabled_notice_due_idx ON webhooks (id)
     WHERE disabled_reason = 'failing' AND disabled_notice_at IS NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS webhooks_disabled_notice_due_idx');
  await knex.raw('ALTER TABLE webhooks DROP COLUMN IF EXISTS disabled_notice_at');
}

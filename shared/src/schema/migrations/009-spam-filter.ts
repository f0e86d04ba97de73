import type { Knex } from 'knex';

/**
 * The spam filter: per form its mode (`spam_filter`) and rules (`spam_rules`, the object the API
 * shows, as json); per submission its score and the reasons the filter recorded (json keeps their
 * order) and, only on forms that refuse duplicates, the hash of its fields (`payload_hash`, with a
 * partial index so the other forms' inserts pay nothing for it). `spam_examples` keeps the owner's
 * marks, with a copy of the fields as they were marked; an example goes with its submission (deleted,
 * erased or past its form's retention), so no one's data outlives its submission in a model. The
 * partial index finds an account's honeypot catches, the other spam examples.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE forms
    ADD COLUMN spam_filter text NOT NULL DEFAULT 'shadow' CHECK (spam_filter IN ('off', 'shadow', 'on')),
    ADD COLUMN spam_rules json NOT NULL DEFAULT '{}'`);
  await knex.raw(`ALTER TABLE submissions
    ADD COLUMN spam_score real,
    ADD COLUMN spam_reasons json,
    ADD COLUMN payload_hash text`);
  await knex.raw(
    `CREATE INDEX submissions_payload_hash_idx ON submissions (form_id, payload_hash, received_at)
     WHERE payload_hash IS NOT NULL`,
  );
  await knex.raw(
    `CREATE INDEX submissions_honeypot_idx ON submissions (account_id, received_at DESC) WHERE spam_reason = 'honeypot'`,
  );
  await knex.raw(`CREATE TABLE spam_examples (
    submission_id text PRIMARY KEY REFERENCES submissions(id) ON DELETE CASCADE,
    account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    is_spam boolean NOT NULL,
    payload json NOT NULL,
    marked_at timestamptz(3) NOT NULL DEFAULT now()
  )`);
  await knex.raw('CREATE INDEX spam_examples_account_idx ON spam_examples (account_id, is_spam, marked_at DESC)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS spam_examples');
  await knex.raw('DROP INDEX IF EXISTS submissions_honeypot_idx');
  await knex.raw('DROP INDEX IF EXISTS submissions_payload_hash_idx');
  await knex.raw('ALTER TABLE submissions DROP COLUMN spam_score, DROP COLUMN spam_reasons, DROP COLUMN payload_hash');
  await knex.raw('ALTER TABLE forms DROP COLUMN spam_filter, DROP COLUMN spam_rules');
}

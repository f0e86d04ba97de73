import type { Knex } from 'knex';

/**
 * The autoresponse limit counts mailboxes per account (`mailboxOf`: case, `+tags` and Gmail's dots folded), not
 * literal addresses per form: one person could be mailed once per spelling and per form. The old table only served a
 * 10-minute window, so it is dropped rather than converted.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE autoresponse_mailboxes (
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    mailbox text NOT NULL,
    sent_at timestamptz(3) NOT NULL,
    PRIMARY KEY (account_id, mailbox))`);
  await knex.raw('DROP TABLE IF EXISTS autoresponse_sends');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE IF NOT EXISTS autoresponse_sends (
    form_id text NOT NULL, recipient text NOT NULL, sent_at timestamptz(3) NOT NULL, PRIMARY KEY (form_id, recipient))`);
  await knex.raw('DROP TABLE IF EXISTS autoresponse_mailboxes');
}

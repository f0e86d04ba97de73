import type { Knex } from 'knex';

/**
 * Sign-ups (ACCOUNT_CREATION=anyone): an e-mail address and the name of the account it asks for, kept until the link
 * mailed there is opened (the token's sha256 only, valid a day, once). No account or person exists before that, so
 * an address typed by someone else leaves nothing behind; `client` (the address it came from) and `email` bound how
 * many links go out.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE sign_ups (
    token_hash text PRIMARY KEY,
    email text NOT NULL,
    account_name text NOT NULL,
    client text NOT NULL,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    expires_at timestamptz(3) NOT NULL,
    used_at timestamptz(3)
  )`);
  await knex.raw('CREATE INDEX sign_ups_email_idx ON sign_ups (email, created_at)');
  await knex.raw('CREATE INDEX sign_ups_client_idx ON sign_ups (client, created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS sign_ups');
}

import type { Knex } from 'knex';

/**
 * Less work per stored submission: its account_id foreign key only repeated the form's (a form
 * belongs to one account, and deleting an account deletes its forms, whose submissions go with
 * them), yet every insert checked it and key-share-locked the account row (file rows still do,
 * through their own key); and no query reads submissions by account and time (lists, exports and
 * usage go by form or by counters).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE submissions DROP CONSTRAINT IF EXISTS submissions_account_id_foreign');
  await knex.raw('DROP INDEX IF EXISTS submissions_account_id_received_at_index');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX submissions_account_id_received_at_index ON submissions (account_id, received_at)');
  await knex.raw(
    'ALTER TABLE submissions ADD CONSTRAINT submissions_account_id_foreign FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE',
  );
}

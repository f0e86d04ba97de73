import type { Knex } from 'knex';

/**
 * Two-factor sign-in: the last TOTP time step a person used, so a code cannot be used twice within its window
 * (RFC 6238 §5.2). The secret, its enrolment time and the recovery code hashes are in `users` since 013.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.bigInteger('totp_last_step').nullable().comment('the 30-second step of the last TOTP code accepted');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => t.dropColumn('totp_last_step'));
}

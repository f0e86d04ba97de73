import type { Knex } from 'knex';

/**
 * Sign-in hardening. A console session remembers whether the sign-in that opened it passed a second factor (a
 * TOTP or recovery code, or single sign-on, whose identity provider applies its own), so a session opened with a
 * password alone never switches into an account that requires two-factor. An invitation counts the wrong passwords
 * tried on it, and is spent after a few.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE console_sessions ADD COLUMN second_factor boolean NOT NULL DEFAULT false`);
  await knex.raw(`ALTER TABLE member_invitations ADD COLUMN failed_attempts smallint NOT NULL DEFAULT 0`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE member_invitations DROP COLUMN IF EXISTS failed_attempts');
  await knex.raw('ALTER TABLE console_sessions DROP COLUMN IF EXISTS second_factor');
}

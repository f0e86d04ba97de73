import type { Knex } from 'knex';

/**
 * When a person's mailbox was proven (`users.email_verified_at`; null: not yet). An invitation link proves nothing
 * (the inviter holds it too), so a person it makes is unverified until a reset link is opened, a sign-up link is
 * opened, or an identity provider vouches for the address; an authenticator enrolled before then is not taken as the
 * mailbox owner's (docs/people.md, "Whose address").
 *
 * People made before: those without a password came through SSO (verified when made); those who opened a sign-up
 * link, when they did; those who opened a reset link, when they did, unless an authenticator was enrolled before it.
 * Everyone else stays unverified.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE users ADD COLUMN email_verified_at timestamptz(3)`);
  await knex.raw(`COMMENT ON COLUMN users.email_verified_at IS 'when the mailbox was proven; null: not yet'`);
  await knex.raw(`UPDATE users SET email_verified_at = created_at WHERE password_hash IS NULL`);
  await knex.raw(`
    UPDATE users u SET email_verified_at = proof.at
    FROM (
      SELECT s.email, min(s.used_at) AS at FROM sign_ups s WHERE s.used_at IS NOT NULL GROUP BY s.email
    ) proof
    WHERE u.email = proof.email AND u.email_verified_at IS NULL`);
  await knex.raw(`
    UPDATE users u SET email_verified_at = proof.at
    FROM (
      SELECT r.user_id, max(r.used_at) AS at FROM password_resets r WHERE r.used_at IS NOT NULL GROUP BY r.user_id
    ) proof
    WHERE u.id = proof.user_id AND u.email_verified_at IS NULL
      AND (u.totp_enabled_at IS NULL OR u.totp_enabled_at > proof.at)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE users DROP COLUMN IF EXISTS email_verified_at');
}

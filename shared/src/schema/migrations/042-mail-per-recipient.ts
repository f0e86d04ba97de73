import type { Knex } from 'knex';

/**
 * Mail fit to forward to a client (docs/decisions/mail.md, "One message per recipient"):
 *
 * - `forms.time_zone`: the IANA zone a form's mails give times in ('UTC' unless set; a setting its project's
 *   form_defaults may set, as the other inheritable ones; management checks the name on input).
 * - `notifications.sent_to`: the recipients a notification or digest has already gone to. Each recipient gets a
 *   message of their own, so a send refused for one address is tried again for the addresses still missing only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE forms ADD COLUMN IF NOT EXISTS time_zone text NOT NULL DEFAULT 'UTC'`);
  await knex.raw(`COMMENT ON COLUMN forms.time_zone IS 'IANA time zone its mails give times in'`);
  // not a payload: a list of addresses, as recipients
  await knex.raw(`ALTER TABLE notifications ADD COLUMN IF NOT EXISTS sent_to jsonb NOT NULL DEFAULT '[]'`);
  await knex.raw(`COMMENT ON COLUMN notifications.sent_to IS 'recipients its message has gone to already'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE notifications DROP COLUMN IF EXISTS sent_to');
  await knex.raw('ALTER TABLE forms DROP COLUMN IF EXISTS time_zone');
}

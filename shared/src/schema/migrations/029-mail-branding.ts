import type { Knex } from 'knex';

/**
 * A form's e-mail in its owner's name: `mail_from_name` (the display name of its notification and
 * autoresponse mails; the address stays MAIL_FROM), `notification_template` (the owner's subject and text of the
 * notification, with `{{field}}` placeholders), and `notification_schedule`: `each` (a mail per submission, as before)
 * or `daily` (one digest a day). `digest_through` is where the next digest starts: the end of the last one, or when the
 * schedule became daily; the partial index finds the forms whose digest is due.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE forms
    ADD COLUMN IF NOT EXISTS mail_from_name text,
    -- not a payload: the owner's template, two named texts (subject, text) whose order means nothing
    ADD COLUMN IF NOT EXISTS notification_template jsonb,
    ADD COLUMN IF NOT EXISTS notification_schedule text NOT NULL DEFAULT 'each'
      CONSTRAINT forms_notification_schedule_check CHECK (notification_schedule IN ('each', 'daily')),
    ADD COLUMN IF NOT EXISTS digest_through timestamptz(3)`);
  await knex.raw(`CREATE INDEX IF NOT EXISTS forms_digest_due_idx ON forms (digest_through)
    WHERE notification_schedule = 'daily'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS forms_digest_due_idx');
  await knex.raw(`ALTER TABLE forms DROP COLUMN IF EXISTS mail_from_name, DROP COLUMN IF EXISTS notification_template,
    DROP COLUMN IF EXISTS notification_schedule, DROP COLUMN IF EXISTS digest_through`);
}

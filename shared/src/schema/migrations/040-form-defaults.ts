import type { Knex } from 'knex';

/**
 * A project's form defaults (`projects.form_defaults`: some of the settings a form inherits, by name) and which of
 * them a form sets itself (`forms.overridden`). The defaults are written through into each form's own columns when
 * they change, so ingest, delivery and the purge read a form's columns as before; `overridden` keeps a form's own
 * choice from being written over (docs/decisions/projects.md, "Settings a form inherits").
 *
 * A form made before sets itself every inheritable setting whose value is not its column's default, so a form its
 * owner already set up is never overwritten when its project later gets a default.
 */
export async function up(knex: Knex): Promise<void> {
  // not a payload: a project's settings for its forms, by name, whose order means nothing
  await knex.raw(`ALTER TABLE projects ADD COLUMN form_defaults jsonb NOT NULL DEFAULT '{}'`);
  await knex.raw(`COMMENT ON COLUMN projects.form_defaults IS 'settings its forms inherit unless they override them'`);
  await knex.raw(`ALTER TABLE forms ADD COLUMN overridden text[] NOT NULL DEFAULT '{}'`);
  await knex.raw(`COMMENT ON COLUMN forms.overridden IS 'the inheritable settings the form sets itself'`);
  await knex.raw(`
    UPDATE forms SET overridden = array_remove(ARRAY[
      CASE WHEN notify_emails <> '[]' THEN 'notify_emails' END,
      CASE WHEN allowed_origins <> '[]' THEN 'allowed_origins' END,
      CASE WHEN mail_from_name IS NOT NULL THEN 'mail_from_name' END,
      CASE WHEN notification_template IS NOT NULL THEN 'notification_template' END,
      CASE WHEN pages IS NOT NULL THEN 'pages' END,
      CASE WHEN spam_filter <> 'shadow' THEN 'spam_filter' END,
      CASE WHEN spam_rules::text <> '{}' THEN 'spam_rules' END,
      CASE WHEN retention_days IS NOT NULL THEN 'retention_days' END,
      CASE WHEN spam_retention_days IS DISTINCT FROM 30 THEN 'spam_retention_days' END
    ], NULL)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE forms DROP COLUMN IF EXISTS overridden');
  await knex.raw('ALTER TABLE projects DROP COLUMN IF EXISTS form_defaults');
}

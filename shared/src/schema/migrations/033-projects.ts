import type { Knex } from 'knex';

/**
 * Projects: an account's forms in groups (an agency's clients, say). Every account has exactly one default
 * project, made with the account by a trigger, and a form created without one goes there (a trigger too, so every
 * writer of either table gets both without knowing). A form must be in a project; a project that holds forms cannot
 * be deleted (no cascade).
 *
 * Members and management keys may be limited to listed projects (`project_ids`, null: the whole account); a
 * project deleted leaves them limited to the rest. `audit_log.project_id` names the project of an entry's target
 * as it was when written (no foreign key: an entry outlives what it names). `intake_new_id` makes an id as the
 * product's `newId` does (`<prefix>_<ULID>`, time-sortable), for the rows SQL makes itself.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE OR REPLACE FUNCTION intake_new_id(prefix text) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
    DECLARE
      alphabet constant text := '0123456789abcdefghjkmnpqrstvwxyz';
      ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
      id text := '';
    BEGIN
      FOR i IN REVERSE 9..0 LOOP
        id := id || substr(alphabet, ((ms >> (i * 5)) & 31)::int + 1, 1);
      END LOOP;
      FOR i IN 1..16 LOOP
        id := id || substr(alphabet, floor(random() * 32)::int + 1, 1);
      END LOOP;
      RETURN prefix || '_' || id;
    END $$`);
  await knex.raw(`CREATE TABLE projects (
    id text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name text NOT NULL,
    is_default boolean NOT NULL DEFAULT false,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    updated_at timestamptz(3) NOT NULL DEFAULT now()
  )`);
  await knex.raw('CREATE UNIQUE INDEX projects_name_idx ON projects (account_id, lower(name))');
  await knex.raw('CREATE UNIQUE INDEX projects_default_idx ON projects (account_id) WHERE is_default');
  await knex.raw(`INSERT INTO projects (id, account_id, name, is_default, created_at)
    SELECT intake_new_id('prj'), id, 'Default', true, created_at FROM accounts`);
  await knex.raw(`CREATE FUNCTION intake_default_project() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO projects (id, account_id, name, is_default) VALUES (intake_new_id('prj'), NEW.id, 'Default', true);
      RETURN NEW;
    END $$`);
  await knex.raw(`CREATE TRIGGER accounts_default_project AFTER INSERT ON accounts
    FOR EACH ROW EXECUTE FUNCTION intake_default_project()`);

  await knex.raw('ALTER TABLE forms ADD COLUMN project_id text REFERENCES projects (id)');
  await knex.raw(
    `UPDATE forms f SET project_id = p.id FROM projects p WHERE p.account_id = f.account_id AND p.is_default`,
  );
  await knex.raw('ALTER TABLE forms ALTER COLUMN project_id SET NOT NULL');
  await knex.raw('CREATE INDEX forms_project_idx ON forms (project_id)');
  await knex.raw(`CREATE FUNCTION intake_form_project() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.project_id IS NULL THEN
        NEW.project_id := (SELECT id FROM projects WHERE account_id = NEW.account_id AND is_default);
      END IF;
      RETURN NEW;
    END $$`);
  await knex.raw(`CREATE TRIGGER forms_default_project BEFORE INSERT ON forms
    FOR EACH ROW EXECUTE FUNCTION intake_form_project()`);

  await knex.raw('ALTER TABLE members ADD COLUMN project_ids text[]');
  await knex.raw('ALTER TABLE api_keys ADD COLUMN project_ids text[]');
  await knex.raw('ALTER TABLE audit_log ADD COLUMN project_id text');
  await knex.raw('CREATE INDEX audit_log_project_idx ON audit_log (account_id, project_id, at DESC)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS audit_log_project_idx');
  await knex.raw('ALTER TABLE audit_log DROP COLUMN IF EXISTS project_id');
  await knex.raw('ALTER TABLE api_keys DROP COLUMN IF EXISTS project_ids');
  await knex.raw('ALTER TABLE members DROP COLUMN IF EXISTS project_ids');
  await knex.raw('DROP TRIGGER IF EXISTS forms_default_project ON forms');
  await knex.raw('DROP FUNCTION IF EXISTS intake_form_project()');
  await knex.raw('ALTER TABLE forms DROP COLUMN IF EXISTS project_id');
  await knex.raw('DROP TRIGGER IF EXISTS accounts_default_project ON accounts');
  await knex.raw('DROP FUNCTION IF EXISTS intake_default_project()');
  await knex.raw('DROP TABLE IF EXISTS projects');
  await knex.raw('DROP FUNCTION IF EXISTS intake_new_id(text)');
}

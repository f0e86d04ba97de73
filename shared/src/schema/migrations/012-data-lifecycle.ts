import type { Knex } from 'knex';

/**
 * Data lifecycle: per-form retention (`retention_days`, `spam_retention_days`, `delete_after_delivery`), the
 * tombstone mark `submissions.purged_at`, and the indexes that keep a million-row form fast.
 *
 * The search document and the e-mail addresses of a submission are computed from its payload by two immutable
 * functions and live in expression indexes: they are written with the submission, inside ingest's one statement,
 * without a column of their own or a change to that statement. Both read the payload as `json` (posted order kept;
 * the functions only look at values). The search document is the payload's values, lower-cased, one per line, under
 * a trigram index (substring search with ILIKE); the e-mail addresses are every value that is one address, trimmed
 * and lower-cased, under a GIN array index (data-subject requests). Spam has an index of its own so that spam
 * retention finds its rows without walking a form's received ones.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await knex.raw(`ALTER TABLE forms
    ADD COLUMN retention_days integer,
    ADD COLUMN spam_retention_days integer DEFAULT 30,
    ADD COLUMN delete_after_delivery boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT forms_retention_days_check CHECK (retention_days BETWEEN 1 AND 3650),
    ADD CONSTRAINT forms_spam_retention_days_check CHECK (spam_retention_days BETWEEN 1 AND 3650)`);
  await knex.raw('ALTER TABLE submissions ADD COLUMN purged_at timestamptz(3)');
  await knex.raw(`
    CREATE FUNCTION intake_search_document(p json) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
      SELECT coalesce(lower(string_agg(kv.value, E'\\n')), '') FROM json_each_text(p) AS kv
    $$`);
  await knex.raw(`
    CREATE FUNCTION intake_payload_emails(p json) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
      SELECT coalesce(array_agg(DISTINCT lower(btrim(kv.value))), '{}') FROM json_each_text(p) AS kv
      WHERE length(kv.value) <= 320 AND btrim(kv.value) ~ '^[^@\\s]+@[^@\\s]+$'
    $$`);
  // fastupdate off: a GIN pending list is read in full by every search until a vacuum merges it (a one-row e-mail
  // lookup read 328 pages of it after 200,000 inserts), and merged by whichever insert finds it full: an ingest post.
  await knex.raw(
    `CREATE INDEX submissions_search_idx ON submissions USING gin (intake_search_document(payload) gin_trgm_ops)
     WITH (fastupdate = off)`,
  );
  await knex.raw(
    'CREATE INDEX submissions_emails_idx ON submissions USING gin (intake_payload_emails(payload)) WITH (fastupdate = off)',
  );
  await knex.raw(`CREATE INDEX submissions_spam_idx ON submissions (form_id, received_at) WHERE status = 'spam'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS submissions_spam_idx');
  await knex.raw('DROP INDEX IF EXISTS submissions_emails_idx');
  await knex.raw('DROP INDEX IF EXISTS submissions_search_idx');
  await knex.raw('DROP FUNCTION IF EXISTS intake_payload_emails(json)');
  await knex.raw('DROP FUNCTION IF EXISTS intake_search_document(json)');
  await knex.raw('ALTER TABLE submissions DROP COLUMN IF EXISTS purged_at');
  await knex.raw(`ALTER TABLE forms DROP COLUMN IF EXISTS retention_days,
    DROP COLUMN IF EXISTS spam_retention_days, DROP COLUMN IF EXISTS delete_after_delivery`);
}

import type { Knex } from 'knex';

/**
 * Search and data-subject keys leave the submission's insert. Migrations 016 and 018 kept them in two GIN expression
 * indexes on `submissions`, which every post paid for inside its request (about 100 trigram keys and an e-mail array
 * per row: ingest answered 1,027–1,959 posts/s with them, 2,374–2,854 without). Now:
 *
 * - `submission_search` holds a submission's keys (migration 016's salted trigrams, its 30-day bucket) and e-mail
 *   addresses (migration 018's), one row per submission, under the two GIN indexes. It is written in batches by the
 *   search indexer (management's `search-indexer.ts`), off the write path, and goes with its submission (a foreign key
 *   that cascades: erasure, retention, delete).
 * - `search_backlog` lists the submissions not yet in it: a statement-level trigger on `submissions` adds every
 *   inserted row (whoever inserts it: ingest, an older ingest during a rolling upgrade, a seed, a test), one small
 *   B-tree row each. The indexer takes rows from it and writes their keys in the same transaction.
 * - Search and data-subject lookups read both: the index for what is indexed, and the form's (or account's) backlog,
 *   tested row by row (the backlog is a second or so of posts). So both stay exact at every moment; only their cost
 *   depends on the indexer keeping up.
 * - A purge (delete-after-delivery empties a payload, `purged_at` set) drops the row's keys in a trigger, so no
 *   writer can leave a tombstone findable by what it said. The indexer holds the rows it indexes FOR SHARE, which
 *   such an update waits for (and it for the update): a purge and an indexing of one row never cross. A purged row
 *   left in the backlog is taken out by the indexer without keys (its empty payload matches nothing meanwhile).
 *
 * Existing rows are indexed here, in bulk, before the GIN indexes are built (far faster than row by row); rows that
 * arrive meanwhile are in the backlog (the trigger exists first), rows deleted meanwhile are swept after the foreign
 * key exists. The old indexes go last, CONCURRENTLY (ingest keeps writing while this runs).
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  const self = await currentSchema(knex);
  await knex.raw(`CREATE TABLE IF NOT EXISTS search_backlog (
    form_id text NOT NULL,
    submission_id text NOT NULL,
    PRIMARY KEY (form_id, submission_id)
  )`);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_backlog_add() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      INSERT INTO ${self}.search_backlog (form_id, submission_id) SELECT form_id, id FROM inserted
        ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`);
  await knex.raw('DROP TRIGGER IF EXISTS submissions_search_backlog ON submissions');
  await knex.raw(`CREATE TRIGGER submissions_search_backlog AFTER INSERT ON submissions
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION intake_search_backlog_add()`);

  await knex.raw(`CREATE TABLE IF NOT EXISTS submission_search (
    submission_id text PRIMARY KEY,
    account_id text NOT NULL,
    form_id text NOT NULL,
    bucket integer NOT NULL,
    keys text[] COLLATE "C" NOT NULL,
    emails text[] NOT NULL
  )`);
  const filled = await knex.raw<{ rows: unknown[] }>('SELECT 1 FROM submission_search LIMIT 1');
  if (filled.rows.length === 0) {
    await knex.raw(`SET maintenance_work_mem = '256MB'`);
    await knex.raw(`INSERT INTO submission_search (submission_id, account_id, form_id, bucket, keys, emails)
      SELECT s.id, s.account_id, s.form_id, intake_search_bucket(s.received_at),
             intake_search_keys(s.form_id, s.received_at, s.payload), intake_subject_emails(s.payload)
      FROM submissions s
      WHERE s.purged_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM search_backlog b WHERE b.form_id = s.form_id AND b.submission_id = s.id)
      ON CONFLICT DO NOTHING`);
  }
  await knex.raw(`DO $$ BEGIN
    ALTER TABLE submission_search ADD CONSTRAINT submission_search_submission_fkey
      FOREIGN KEY (submission_id) REFERENCES submissions (id) ON DELETE CASCADE NOT VALID;
    EXCEPTION WHEN duplicate_object THEN NULL;
  END $$`);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_forget_purged() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      DELETE FROM ${self}.submission_search WHERE submission_id = NEW.id;
      RETURN NULL;
    END $$`);
  await knex.raw('DROP TRIGGER IF EXISTS submissions_search_forget_purged ON submissions');
  await knex.raw(`CREATE TRIGGER submissions_search_forget_purged AFTER UPDATE OF payload ON submissions
    FOR EACH ROW WHEN (NEW.purged_at IS NOT NULL) EXECUTE FUNCTION intake_search_forget_purged()`);
  // Rows deleted or purged while the fill ran, before the foreign key and the purge trigger existed.
  await knex.raw(`DELETE FROM submission_search k
    WHERE NOT EXISTS (SELECT 1 FROM submissions s WHERE s.id = k.submission_id AND s.purged_at IS NULL)`);
  await knex.raw('ALTER TABLE submission_search VALIDATE CONSTRAINT submission_search_submission_fkey');
  // A pending list of 64 kB: the indexer's batches go to it and are merged into the tree sorted, a list at a time,
  // which costs half of inserting key by key (24,368 rows in batches of 500: 2.1-2.2 s against 4.7-4.8 s); a search
  // reads the list whole, at most 8 pages (migration 012's 4 MB default made a one-row lookup read 328 pages).
  for (const [name, column] of [
    ['submission_search_keys_idx', 'keys'],
    ['submission_search_emails_idx', 'emails'],
  ])
    await knex.raw(`CREATE INDEX IF NOT EXISTS ${name} ON submission_search USING gin (${column})
      WITH (fastupdate = on, gin_pending_list_limit = 64)`);

  // The form's submissions waiting for the indexer. Read with a plain index scan, never a bitmap one: the backlog is a
  // queue, its index full of rows the indexer has taken until a vacuum comes; an index scan marks those it meets dead
  // (the next scan skips them), a bitmap scan rereads them all every time (20,000 of them: 10 ms, each 30-day bucket of
  // a search, in a test database without autovacuum).
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_waiting(form text) RETURNS SETOF text
    LANGUAGE plpgsql STABLE PARALLEL SAFE STRICT ROWS 10 SET enable_bitmapscan = off SET enable_seqscan = off AS $$
    BEGIN
      RETURN QUERY SELECT b.submission_id FROM ${self}.search_backlog AS b WHERE b.form_id = form;
    END $$`);
  // A bucket's candidates (migration 016): the indexed rows whose keys hold the terms', and the form's rows not yet
  // indexed, whatever they say (the caller's ILIKE is the exact test). The backlog's rows are few; a row in both (the
  // fill above and the trigger) is taken once.
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_candidates(form text, bucket integer, terms text[]) RETURNS SETOF submissions
    LANGUAGE plpgsql STABLE PARALLEL SAFE STRICT ROWS 20 AS $$ BEGIN
      RETURN QUERY
        SELECT s.* FROM ${self}.submission_search AS k JOIN ${self}.submissions AS s ON s.id = k.submission_id
        WHERE k.keys @> ${self}.intake_search_query_keys(form, intake_search_candidates.bucket, terms)
          AND k.bucket = intake_search_candidates.bucket
        UNION ALL
        SELECT s.* FROM ${self}.intake_search_waiting(form) AS w(id) JOIN ${self}.submissions AS s ON s.id = w.id
        WHERE ${self}.intake_search_bucket(s.received_at) = intake_search_candidates.bucket
          AND NOT EXISTS (SELECT 1 FROM ${self}.submission_search AS k WHERE k.submission_id = w.id);
    END $$`);
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS submissions_search_keys_idx');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS submissions_subject_emails_idx');
}

async function currentSchema(knex: Knex): Promise<string> {
  const { rows } = await knex.raw<{ rows: { schema: string }[] }>('SELECT quote_ident(current_schema()) AS schema');
  return rows[0]!.schema;
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS submissions_subject_emails_idx ON submissions
     USING gin (intake_subject_emails(payload)) WITH (fastupdate = off)`,
  );
  await knex.raw(
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS submissions_search_keys_idx ON submissions
     USING gin ((intake_search_keys(form_id, received_at, payload) COLLATE "C")) WITH (fastupdate = off)`,
  );
  const self = await currentSchema(knex);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_candidates(form text, bucket integer, terms text[]) RETURNS SETOF submissions
    LANGUAGE plpgsql STABLE PARALLEL SAFE STRICT ROWS 20 AS $$ BEGIN
      RETURN QUERY SELECT * FROM ${self}.submissions AS s
        WHERE (${self}.intake_search_keys(s.form_id, s.received_at, s.payload) COLLATE "C")
                @> ${self}.intake_search_query_keys(form, bucket, terms)
          AND ${self}.intake_search_bucket(s.received_at) = bucket;
    END $$`);
  await knex.raw('DROP FUNCTION IF EXISTS intake_search_waiting(text)');
  await knex.raw('DROP TRIGGER IF EXISTS submissions_search_forget_purged ON submissions');
  await knex.raw('DROP TRIGGER IF EXISTS submissions_search_backlog ON submissions');
  await knex.raw('DROP FUNCTION IF EXISTS intake_search_forget_purged()');
  await knex.raw('DROP FUNCTION IF EXISTS intake_search_backlog_add()');
  await knex.raw('DROP TABLE IF EXISTS submission_search');
  await knex.raw('DROP TABLE IF EXISTS search_backlog');
}

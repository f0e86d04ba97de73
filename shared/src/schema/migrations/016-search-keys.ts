import type { Knex } from 'knex';

/**
 * The inbox's search reads a few rows however large the form: its index keys each trigram of a submission's search
 * document by the form and a 30-day bucket of its received time, so a search asks, newest bucket first, only for the
 * form's rows of one bucket that hold every trigram of the words, and stops once it has a page. Migration 012's
 * trigram index spanned every form and every month: a word in 0.1 % of a million-row form meant reading and sorting
 * 1,000 rows (and every other form's) for a page of 25.
 *
 * A key is the trigram after a salt of eight hex digits, `to_hex(hashtext(form || '/' || bucket))`, in a GIN array
 * index; the trigrams are pg_trgm's (`show_trgm`, lower-cased words). Keys are lossy (a salt is a hash, and a trigram is
 * no proof of the substring): the search keeps the `ILIKE` over the document as the exact test and the bucket as a
 * condition of its own.
 *
 * A query's terms are the trigrams pg_trgm finds in it that any text containing it must also have: those that stay
 * when the query is put between other letters (`x…x`, `y…y`), so not the padding at its two ends (`zep` of
 * "zephyrine" is in "bezephyrined", `  z` is not). A query without such a trigram (fewer than three letters or digits
 * in a row) has no terms and is searched without this index.
 *
 * The index is built CONCURRENTLY (outside a transaction), so that upgrading a large install does not stop ingest's
 * writes while it is built; an index a failed build left invalid is dropped and built again.
 */
export const config = { transaction: false };

/** 30 days, in seconds: a bucket of received time. */
const BUCKET_SECONDS = 30 * 86_400;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  // Qualified: maintenance (ANALYZE, REINDEX) runs index expressions with a search_path of pg_catalog only (PG 17).
  const { rows } = await knex.raw<{ rows: { schema: string }[] }>(
    `SELECT quote_ident(n.nspname) AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pg_trgm'`,
  );
  const trgm = `${rows[0]!.schema}.show_trgm`;
  const self = `${await currentSchema(knex)}.`;
  // PL/pgSQL rather than SQL: these run for every inserted row, and a one-expression PL/pgSQL function is evaluated
  // without an executor of its own (a SQL function with extract(), which is only stable, is never inlined: 275 µs a
  // row against 60). The keys are built with string functions, without a subquery, for the same reason.
  const salted = (salt: string, trigrams: string) =>
    `string_to_array(substr(array_to_string(array_prepend('', ${trigrams}), '|' || ${salt}), 2), '|')`;
  const saltOf = (bucket: string) => `to_hex(hashtext(form || '/' || ${bucket}))`;
  const bucketOf = (at: string) => `floor(extract(epoch FROM ${at}) / ${BUCKET_SECONDS})::integer`;
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_bucket(at timestamptz) RETURNS integer
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$ BEGIN RETURN ${bucketOf('at')}; END $$`);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_keys(form text, at timestamptz, p json) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$ BEGIN
      RETURN ${salted(saltOf(bucketOf('at')), `${trgm}(${self}intake_search_document(p))`)};
    END $$`);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_query_keys(form text, bucket integer, terms text[]) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$ BEGIN RETURN ${salted(saltOf('bucket'), 'terms')}; END $$`);
  // At most 8 terms: each is one more index look-up per bucket, and the ILIKE is the exact test anyway.
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_terms(q text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
      SELECT coalesce(array_agg(t), '{}') FROM (
        SELECT unnest(${trgm}(lower(q)))
        INTERSECT SELECT unnest(${trgm}('x' || lower(q) || 'x'))
        INTERSECT SELECT unnest(${trgm}('y' || lower(q) || 'y'))
        LIMIT 8
      ) AS i(t)
    $$`);
  // A bucket's candidates, behind a function so that the planner sees them as the index alone gives them: asked in
  // the open it took the containment for unselective (it cannot see a lateral value's keys), ANDed in the form's own
  // index, which reads every row of the form (390 ms a page at 1,000,000 rows), and costed the walk high enough to
  // compile it with JIT (300 ms more). The form is the salt's; the caller checks it with the rest of its filter.
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_candidates(form text, bucket integer, terms text[]) RETURNS SETOF submissions
    LANGUAGE plpgsql STABLE PARALLEL SAFE STRICT ROWS 20 AS $$ BEGIN
      RETURN QUERY SELECT * FROM ${self}submissions AS s
        WHERE (${self}intake_search_keys(s.form_id, s.received_at, s.payload) COLLATE "C")
                @> ${self}intake_search_query_keys(form, bucket, terms)
          AND ${self}intake_search_bucket(s.received_at) = bucket;
    END $$`);
  const valid = await knex.raw<{ rows: { valid: boolean }[] }>(
    `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass('submissions_search_keys_idx')`,
  );
  if (valid.rows[0]?.valid === false) await knex.raw('DROP INDEX CONCURRENTLY submissions_search_keys_idx');
  // fastupdate off, as for migration 012's indexes: a pending list is read whole by every search. The keys compare
  // bytewise (COLLATE "C"): with the database's collation the index cost inserts 20 % more (20,000 rows: 7.8-9.7 s
  // against 6.4-8.0 s, migration 012's trigram index 6.0-7.2 s).
  await knex.raw(
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS submissions_search_keys_idx ON submissions
     USING gin ((intake_search_keys(form_id, received_at, payload) COLLATE "C")) WITH (fastupdate = off)`,
  );
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS submissions_search_idx');
}

async function currentSchema(knex: Knex): Promise<string> {
  const { rows } = await knex.raw<{ rows: { schema: string }[] }>('SELECT quote_ident(current_schema()) AS schema');
  return rows[0]!.schema;
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS submissions_search_idx ON submissions
     USING gin (intake_search_document(payload) gin_trgm_ops) WITH (fastupdate = off)`,
  );
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS submissions_search_keys_idx');
  await knex.raw('DROP FUNCTION IF EXISTS intake_search_candidates(text, integer, text[])');
  await knex.raw('DROP FUNCTION IF EXISTS intake_search_query_keys(text, integer, text[])');
  await knex.raw('DROP FUNCTION IF EXISTS intake_search_terms(text)');
  await knex.raw('DROP FUNCTION IF EXISTS intake_search_keys(text, timestamptz, json)');
  await knex.raw('DROP FUNCTION IF EXISTS intake_search_bucket(timestamptz)');
}

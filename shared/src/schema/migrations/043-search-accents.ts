import type { Knex } from 'knex';

/**
 * Search ignores accents as it ignores case: "cafe" finds "Café", "muller" finds "Müller", "strasse" finds "Straße",
 * "soren" finds "Søren", and the other way round. One function folds text, `intake_search_fold` (Postgres's `unaccent`
 * dictionary, then lower case), and every side of a search goes through it: the search document (migration 012) whose
 * trigrams are the index's keys (016, 024), a query's terms, and the pattern of the exact test, which
 * `intake_search_pattern` builds from the folded query (escaped after folding: `unaccent` turns a full-width ％ or ＿
 * into a LIKE wildcard). `unaccent` rather than Unicode decomposition (NFD, marks stripped): it also folds letters
 * that do not decompose (ß, ø, ł, æ, œ), which names in European forms hold. It is a contrib extension like pg_trgm,
 * trusted since Postgres 13 (a database owner may create it), and shipped wherever pg_trgm is.
 *
 * `unaccent` is only stable (its dictionary could change); the wrapper is declared immutable with the dictionary named
 * by its schema, as its documentation suggests for index expressions. The keys live in `submission_search`, not in an
 * expression index, so a changed dictionary would at worst need a re-index, not a corrupt index.
 *
 * Indexed rows whose values hold anything but ASCII may now have other keys: their `submission_search` rows go, and
 * they go back to the search backlog, which the indexer drains in batches (searches read the backlog row by row
 * meanwhile, so they stay exact). ASCII-only payloads fold to what they were, and keep their keys.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS unaccent');
  const unaccent = `${await extensionSchema(knex, 'unaccent')}.unaccent`;
  await defineFunctions(knex, (text) => `lower(${unaccent}('${unaccent}'::regdictionary, ${text}))`);
  await requeueNonAscii(knex);
}

export async function down(knex: Knex): Promise<void> {
  await defineFunctions(knex, (text) => `lower(${text})`);
  // The functions stay, folding case only, as before: what ran before 043 does not call them.
  await requeueNonAscii(knex);
}

/** The folding function and those that use it; `fold(text)` is the folding expression. */
async function defineFunctions(knex: Knex, fold: (text: string) => string): Promise<void> {
  const self = await currentSchema(knex);
  const trgm = `${await extensionSchema(knex, 'pg_trgm')}.show_trgm`;
  // PL/pgSQL: one expression, evaluated without an executor of its own (migration 016).
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_fold(t text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$ BEGIN RETURN ${fold('t')}; END $$`);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_pattern(q text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
      SELECT '%' || regexp_replace(${self}.intake_search_fold(q), '([\\\\%_])', '\\\\\\1', 'g') || '%'
    $$`);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_document(p json) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
      SELECT coalesce(${self}.intake_search_fold(string_agg(kv.value, E'\\n')), '') FROM json_each_text(p) AS kv
    $$`);
  // As migration 016's, of the folded query.
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_search_terms(q text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
      SELECT coalesce(array_agg(t), '{}') FROM (
        SELECT unnest(${trgm}(${self}.intake_search_fold(q)))
        INTERSECT SELECT unnest(${trgm}('x' || ${self}.intake_search_fold(q) || 'x'))
        INTERSECT SELECT unnest(${trgm}('y' || ${self}.intake_search_fold(q) || 'y'))
        LIMIT 8
      ) AS i(t)
    $$`);
}

/**
 * Indexed submissions whose payload holds a character outside ASCII (or a JSON escape that may stand for one) lose
 * their keys and go back to the backlog, to be indexed again with the functions now defined.
 */
async function requeueNonAscii(knex: Knex): Promise<void> {
  await knex.raw(`WITH stale AS (
      DELETE FROM submission_search k USING submissions s
      WHERE s.id = k.submission_id AND (s.payload::text ~ '[^\\x01-\\x7f]' OR strpos(s.payload::text, '\\u') > 0)
      RETURNING s.form_id, s.id
    )
    INSERT INTO search_backlog (form_id, submission_id) SELECT form_id, id FROM stale ON CONFLICT DO NOTHING`);
}

async function currentSchema(knex: Knex): Promise<string> {
  const { rows } = await knex.raw<{ rows: { schema: string }[] }>('SELECT quote_ident(current_schema()) AS schema');
  return rows[0]!.schema;
}

async function extensionSchema(knex: Knex, name: string): Promise<string> {
  const { rows } = await knex.raw<{ rows: { schema: string }[] }>(
    `SELECT quote_ident(n.nspname) AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = ?`,
    [name],
  );
  if (!rows[0]) throw new Error(`extension ${name} is not installed`);
  return rows[0].schema;
}

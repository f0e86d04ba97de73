import type { Knex } from 'knex';

/**
 * A data subject's address is found in a field value trimmed of the same whitespace the API trims from the address
 * it is asked for: every character JavaScript's `String.prototype.trim` removes (tab, line breaks, no-break space,
 * the Unicode spaces, the byte-order mark), not just the ASCII space of migration 012's `btrim(value)`. A value
 * "\u00a0ada@example.com\t" was missing from the index (and so from lookups, exports and erasures).
 *
 * `btrim` with a set of characters costs what plain `btrim` costs. A new function and a new index, built
 * CONCURRENTLY (ingest keeps writing while it is built), replace the old ones; an invalid index a failed build left
 * is dropped and built again.
 */
export const config = { transaction: false };

/** The characters `String.prototype.trim` removes (ECMAScript WhiteSpace and LineTerminator). */
const TRIMMED = [
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007,
  0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff,
]
  .map((c) => `\\u${c.toString(16).padStart(4, '0')}`)
  .join('');

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_subject_emails(p json) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
      SELECT coalesce(array_agg(DISTINCT lower(t.value)), '{}')
      FROM json_each_text(p) AS kv, LATERAL (SELECT btrim(kv.value, E'${TRIMMED}') AS value) AS t
      WHERE length(kv.value) <= 320 AND t.value ~ '^[^@\\s]+@[^@\\s]+$'
    $$`);
  const valid = await knex.raw<{ rows: { valid: boolean }[] }>(
    `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass('submissions_subject_emails_idx')`,
  );
  if (valid.rows[0]?.valid === false) await knex.raw('DROP INDEX CONCURRENTLY submissions_subject_emails_idx');
  await knex.raw(
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS submissions_subject_emails_idx ON submissions
     USING gin (intake_subject_emails(payload)) WITH (fastupdate = off)`,
  );
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS submissions_emails_idx');
  await knex.raw('DROP FUNCTION IF EXISTS intake_payload_emails(json)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_payload_emails(p json) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
      SELECT coalesce(array_agg(DISTINCT lower(btrim(kv.value))), '{}') FROM json_each_text(p) AS kv
      WHERE length(kv.value) <= 320 AND btrim(kv.value) ~ '^[^@\\s]+@[^@\\s]+$'
    $$`);
  await knex.raw(
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS submissions_emails_idx ON submissions
     USING gin (intake_payload_emails(payload)) WITH (fastupdate = off)`,
  );
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS submissions_subject_emails_idx');
  await knex.raw('DROP FUNCTION IF EXISTS intake_subject_emails(json)');
}

import type { Db } from '../base/db';

/** Named SQL expressions whose text, taken together, is the state a test watches. */
export type DigestParts = Record<string, string>;

/** Every row of `table` (aliased `t`) matching `where`, as one text: the expression for a digest part. */
export const rowsOf = (table: string, where: string, columns = 't', order = 't.id'): string =>
  `(select string_agg((${columns})::text, ',' order by ${order}) from ${table} t where ${where})`;

/**
 * The md5 of each part's text, by name, in one statement: comparing two digests names the parts a call
 * changed (a bare hash of everything only says that something did).
 */
export async function digestOf(
  db: Db,
  parts: DigestParts,
  bindings: Record<string, string | string[]> = {},
): Promise<Record<string, string>> {
  const names = Object.keys(parts);
  const columns = names.map((name, i) => `md5(coalesce((${parts[name]})::text, '')) as p${i}`).join(', ');
  const { rows } = (await db.raw(`select ${columns}`, bindings)) as { rows: Record<string, string>[] };
  const row = rows[0] ?? {};
  return Object.fromEntries(names.map((name, i) => [name, row[`p${i}`] ?? '']));
}

/** The names of the parts that differ between two digests. */
export const changedParts = (before: Record<string, string>, after: Record<string, string>): string[] =>
  Object.keys({ ...before, ...after }).filter((name) => before[name] !== after[name]);

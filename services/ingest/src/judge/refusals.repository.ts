import { type Queryable } from '@intake/shared/base';

/** Adds refused posts to `rate_limit_refusals`, a row per `<form id> <UTC day>` key; a form no longer there is skipped. */
export async function addRefusals(db: Queryable, rows: [string, { refused: number; last: Date }][]): Promise<void> {
  await db.raw(
    `INSERT INTO rate_limit_refusals AS r (form_id, day, refused, last_at)
     SELECT v.form_id, v.day, v.refused, v.last_at
     FROM unnest(?::text[], ?::date[], ?::int[], ?::timestamptz[]) AS v(form_id, day, refused, last_at)
     JOIN forms f ON f.id = v.form_id
     ON CONFLICT (form_id, day) DO UPDATE
       SET refused = r.refused + excluded.refused, last_at = greatest(r.last_at, excluded.last_at)`,
    [
      rows.map(([key]) => key.split(' ')[0]!),
      rows.map(([key]) => key.split(' ')[1]!),
      rows.map(([, c]) => c.refused),
      rows.map(([, c]) => c.last.toISOString()),
    ],
  );
}

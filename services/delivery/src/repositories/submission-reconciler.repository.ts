import type { Db, Queryable } from '@intake/shared/base';
import type { StoredFile, StoredSubmission } from '@intake/shared/contracts';

/** A stored submission that has no delivery for some webhooks its form had when it was received. */
export interface SubmissionWithoutDeliveries {
  submission: StoredSubmission;
  files: StoredFile[];
  formName: string;
  /** The enabled webhooks, made before the submission was received, that have no delivery of it. */
  webhookIds: string[];
}

/** One step of the submission reconciler's walk (see walkSubmissionsWithoutDeliveries). */
export interface SubmissionWalkStep {
  /** Submissions walked past. */
  walked: number;
  /** Of those, the ones without some of their deliveries (handed to `repair`). */
  missing: SubmissionWithoutDeliveries[];
}

/** The cursor's name in `reconciler_cursors` (migration 026). */
const CURSOR = 'submissions';

/**
 * One step of the submission reconciler's walk over `submissions`, in one transaction: the next `limit` submissions
 * after its cursor whose ids sort below `before` (received before then, by the primary key's index). Of those, each
 * still received (not spam, not in the trash, not purged) of a form (not in the trash) with an enabled webhook made
 * no later than the submission and holding no delivery of it is handed to `repair`, with those webhooks; the cursor
 * moves past the step only once `repair` has returned, so a step whose repair fails is walked again. With no cursor
 * the walk starts at `start`: older submissions are not walked. Answers undefined when another process is walking.
 */
export async function walkSubmissionsWithoutDeliveries(
  db: Db,
  props: { start: string; before: string; limit: number },
  repair: (missing: SubmissionWithoutDeliveries[]) => Promise<void>,
): Promise<SubmissionWalkStep | undefined> {
  return db.transaction(async (trx) => {
    await trx.raw(`INSERT INTO reconciler_cursors (name, position) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, [
      CURSOR,
      props.start,
    ]);
    const { rows: cursor } = await trx.raw<{ rows: { position: string }[] }>(
      `SELECT position FROM reconciler_cursors WHERE name = ? FOR UPDATE SKIP LOCKED`,
      [CURSOR],
    );
    if (cursor.length === 0) return undefined;
    const { rows } = await trx.raw<{
      rows: { last: string | null; walked: number; missing: { id: string; webhook_ids: string[] }[] | null }[];
    }>(
      `WITH walked AS (SELECT id FROM submissions WHERE id > ? AND id < ? ORDER BY id LIMIT ?),
       missing AS (
         SELECT s.id, array_agg(w.id ORDER BY w.id) AS webhook_ids
         FROM walked JOIN submissions s ON s.id = walked.id
         JOIN forms f ON f.id = s.form_id AND f.deleted_at IS NULL
         JOIN webhooks w ON w.form_id = s.form_id AND w.account_id = s.account_id AND w.enabled
           AND w.created_at <= s.received_at
         WHERE s.status = 'received' AND s.deleted_at IS NULL AND s.purged_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM deliveries d
             WHERE d.webhook_id = w.id AND d.submission_id = s.id AND d.event_type = 'submission.created')
         GROUP BY s.id)
       SELECT (SELECT max(id) FROM walked) AS last, (SELECT count(*)::int FROM walked) AS walked,
         (SELECT json_agg(json_build_object('id', id, 'webhook_ids', webhook_ids)) FROM missing) AS missing`,
      [cursor[0]!.position, props.before, props.limit],
    );
    const step = rows[0]!;
    const missing = step.missing ?? [];
    const found = missing.length > 0 ? await submissionsOf(trx, missing) : [];
    if (found.length > 0) await repair(found);
    if (step.last !== null)
      await trx.raw(`UPDATE reconciler_cursors SET position = ?, updated_at = now() WHERE name = ?`, [
        step.last,
        CURSOR,
      ]);
    return { walked: step.walked, missing: found };
  });
}

/** The submissions (with their files and form's name) of `missing`, in id order. */
async function submissionsOf(
  trx: Queryable,
  missing: { id: string; webhook_ids: string[] }[],
): Promise<SubmissionWithoutDeliveries[]> {
  const hooks = new Map(missing.map((m) => [m.id, m.webhook_ids]));
  const { rows } = await trx.raw<{
    rows: (StoredSubmission & { form_name: string; files: StoredFile[] })[];
  }>(
    `SELECT s.id, s.account_id, s.form_id, s.status, s.payload, s.spam_reason, s.received_at, s.directions,
       f.name AS form_name,
       coalesce((SELECT json_agg(json_build_object('id', sf.id, 'field', sf.field, 'filename', sf.filename,
           'content_type', sf.content_type, 'size', sf.size) ORDER BY sf.created_at, sf.id)
         FROM submission_files sf WHERE sf.submission_id = s.id), '[]') AS files
     FROM submissions s JOIN forms f ON f.id = s.form_id
     WHERE s.id = ANY (?::text[]) ORDER BY s.id`,
    [[...hooks.keys()]],
  );
  return rows.map(({ form_name, files, ...submission }) => ({
    submission,
    files,
    formName: form_name,
    webhookIds: hooks.get(submission.id) ?? [],
  }));
}

/** When the oldest post still in the outbox (stored, its event not yet published) was written; undefined when none. */
export async function findOldestOutboxTime(db: Db): Promise<Date | undefined> {
  const row = (await db('outbox').orderBy('seq').first('created_at')) as { created_at: Date } | undefined;
  return row?.created_at;
}

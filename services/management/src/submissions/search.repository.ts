import type { Queryable } from '@intake/shared/base';

/**
 * Indexes up to `limit` submissions of the search backlog (migration 024) in one transaction: each one's keys and
 * e-mail addresses into `submission_search`, its backlog row out. Rows another indexer holds are skipped; a purged
 * submission gets no keys; one deleted meanwhile is simply gone. The submissions are held FOR SHARE (in id order, as
 * erasure and retention lock them), which every update waits for: none is purged between reading it and indexing it
 * (a purge's trigger removes the keys of an indexed row; a row purged first is read as purged). Returns how many
 * backlog rows it took. The backlog is read in its index's order, so the scan marks the rows taken before dead and
 * the next one skips them (a sequential scan would read every dead row until a vacuum).
 *
 * Before it commits, the batch's keys go from the GIN indexes' pending lists into their trees in one merge
 * (`gin_clean_pending_list`, migration 038): a key shared by many of the batch's rows is inserted once, which made
 * indexing varied submissions 2.7 times cheaper than the merges of 64 kB that inserts made on their own, and the
 * lists are empty again between batches, so a search reads only the index.
 */
export async function indexSearchBacklog(db: Queryable, limit: number): Promise<number> {
  return db.transaction(async (trx) => {
    const { rows } = await trx.raw<{ rows: { taken: number }[] }>(INDEX_BATCH, [limit]);
    const { taken } = rows[0]!;
    if (taken > 0) await mergeSearchPendingLists(trx);
    return taken;
  });
}

const INDEX_BATCH = `WITH picked AS MATERIALIZED (
       SELECT form_id, submission_id FROM search_backlog ORDER BY form_id, submission_id LIMIT ? FOR UPDATE SKIP LOCKED
     ),
     held AS MATERIALIZED (
       SELECT s.id, s.account_id, s.form_id, s.received_at, s.payload, s.directions FROM submissions s
       WHERE s.id IN (SELECT submission_id FROM picked) AND s.purged_at IS NULL
       ORDER BY s.id FOR SHARE
     ),
     indexed AS (
       INSERT INTO submission_search (submission_id, account_id, form_id, bucket, keys, emails)
       SELECT id, account_id, form_id, intake_search_bucket(received_at),
              intake_search_keys(form_id, received_at, payload),
              -- the address a _replyto control field gave is the visitor's too (migration 028)
              intake_subject_emails(payload) || coalesce(intake_subject_emails(directions::json), '{}')
       FROM held ON CONFLICT (submission_id) DO NOTHING
     ),
     taken AS (
       DELETE FROM search_backlog b USING picked p
       WHERE b.form_id = p.form_id AND b.submission_id = p.submission_id RETURNING 1
     )
     SELECT count(*)::int AS taken FROM taken`;

/**
 * Merges both search indexes' pending lists into their trees. Only an index's owner may (the migrations' role, which
 * the services run as): a role that does not own them leaves the merges to the inserts, at the lists' limit of 4 MB.
 * An index that does not exist (the bench's seed drops them while it writes) is skipped.
 */
export async function mergeSearchPendingLists(db: Queryable): Promise<void> {
  await db.raw(`SELECT gin_clean_pending_list(c.oid) FROM pg_class c
    WHERE c.oid IN (SELECT to_regclass(name)
                    FROM unnest(ARRAY['submission_search_keys_idx', 'submission_search_emails_idx']) AS name)
      AND pg_has_role(c.relowner, 'USAGE')`);
}

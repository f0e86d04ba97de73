/**
 * The SQL of storing a group of posts (`store.ts` runs it), in parts named after the rules. Every
 * statement reads the same parameters, in this order (a statement takes the first ones it needs):
 *
 * - `$1` the posts, `text[]`: each its submission, files and idempotency claim as JSON;
 * - `$2` their events, `text[]`: element n is post n's event, the very text that is published
 *   (the outbox keeps it as written); a post's fields travel once, in its event, unless its event
 *   goes without them (too large for a message: then in the post's `payload`);
 * - `$3` whether to claim the posts' idempotency keys;
 * - `$4` the ordinals (from 0) of posts not to store, `int[]`;
 * - `$5` whether to count the received posts, all or nothing.
 */

/**
 * The group, post n being element n + 1 of `$1` and of `$2`. It also sets the transaction's lock
 * timeout, before anything is locked: a row locked for long (a form or an account being deleted)
 * fails the group with 55P03 instead of stalling every post behind it.
 */
const POSTS = `posts AS MATERIALIZED (
    SELECT (t.o - 1)::int AS n, i.*, t.event::json AS event
    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(item, event, o),
         json_to_record(t.item::json) AS i(
           id text, account_id text, form_id text, status text, payload json, ip text, user_agent text,
           referrer text, spam_reason text, spam_score real, spam_reasons json, payload_hash text, received_at timestamptz, files json, event_id text, subject text,
           -- not a payload: headers is the trace context of the event
           headers jsonb, period date, quota int, idempotency_key text, idempotency_expires_at timestamptz)
    WHERE set_config('lock_timeout', '5s', true) IS NOT NULL
  ),
  live_posts AS MATERIALIZED (SELECT p.* FROM posts p WHERE EXISTS (SELECT 1 FROM forms f WHERE f.id = p.form_id))`;

/**
 * Idempotency: each key claimed in (form, key) order, so two groups never wait on each other in a
 * cycle; of two posts with one key the first wins. A key held by an unexpired claim, or by another
 * transaction that then commits, is lost: its post is not stored (`lost`). Posts whose form is gone
 * claim nothing.
 */
const IDEMPOTENCY_CLAIM = `idempotency_claimed AS (
    INSERT INTO idempotency_keys AS k (form_id, key, submission_id, created_at, expires_at)
      SELECT DISTINCT ON (form_id, idempotency_key) form_id, idempotency_key, id, received_at, idempotency_expires_at
      FROM live_posts WHERE $3::boolean AND idempotency_key IS NOT NULL
      ORDER BY form_id, idempotency_key, n
      ON CONFLICT (form_id, key) DO UPDATE
        SET submission_id = excluded.submission_id, created_at = excluded.created_at, expires_at = excluded.expires_at
        WHERE k.expires_at <= excluded.created_at
      RETURNING submission_id
  ),
  lost AS MATERIALIZED (
    SELECT n FROM live_posts
    WHERE $3::boolean AND idempotency_key IS NOT NULL AND id NOT IN (SELECT submission_id FROM idempotency_claimed)
  )`;

/**
 * The submission, its files and its outbox event for every post not skipped nor lost whose form
 * still exists; a post whose form was deleted after ingest read it (ingest caches forms briefly) is
 * not stored (`gone`).
 */
const SUBMISSION_FILES_EVENT = `kept AS MATERIALIZED (
    SELECT * FROM live_posts WHERE NOT n = ANY ($4::int[]) AND n NOT IN (SELECT n FROM lost)
  ),
  gone AS (
    SELECT n FROM posts WHERE NOT n = ANY ($4::int[]) AND n NOT IN (SELECT n FROM live_posts)
  ),
  submissions_stored AS (
    INSERT INTO submissions
        (id, account_id, form_id, status, payload, file_count, file_bytes, ip, user_agent, referrer, spam_reason,
         spam_score, spam_reasons, payload_hash, received_at, directions)
      SELECT id, account_id, form_id, status, coalesce(payload, event -> 'payload'), coalesce(json_array_length(files), 0),
             (event ->> 'file_bytes')::bigint, ip, user_agent, referrer, spam_reason,
             spam_score, spam_reasons, payload_hash, received_at, event -> 'directions'
      FROM kept ORDER BY n
      RETURNING 1
  ),
  files_stored AS (
    INSERT INTO submission_files (id, submission_id, account_id, field, filename, content_type, size, storage_key, created_at)
      SELECT f.id, kept.id, kept.account_id, f.field, f.filename, f.content_type, f.size, f.storage_key, kept.received_at
      FROM kept CROSS JOIN LATERAL json_to_recordset(kept.files)
           AS f(id text, field text, filename text, content_type text, size bigint, storage_key text)
      WHERE kept.files IS NOT NULL
      RETURNING 1
  ),
  events_written AS (
    INSERT INTO outbox (event_id, subject, payload, headers) SELECT event_id, subject, event, headers FROM kept ORDER BY n
    RETURNING 1
  )`;

/**
 * The received posts (spam never counts) counted in their account's month, all or nothing
 * (`intake_count_received`, which raises IQ001 when the quota cannot take them: nothing of the group
 * is stored), one month after another in (account, month) order, and after everything else is
 * written, so the counter row stays locked only for the commit.
 */
const USAGE_COUNT = `received_counted AS (
    SELECT r.*, intake_count_received(r.account_id, r.period, r.posts, r.quota, false) AS counted
    FROM (
      SELECT account_id, period, count(*)::int AS posts, coalesce(min(quota), 0) AS quota FROM kept
      WHERE $5::boolean AND status = 'received'
        AND (SELECT count(*) FROM submissions_stored) + (SELECT count(*) FROM files_stored)
            + (SELECT count(*) FROM events_written) >= 0
      GROUP BY account_id, period ORDER BY account_id, period
    ) r
  )`;

const ordinals = (cte: string) => `(SELECT coalesce(array_agg(n ORDER BY n), '{}') FROM ${cte})`;

/** Claims, stores and counts a group: the whole write in one statement (`$1`–`$5`). */
export const STORE_GROUP = `WITH ${POSTS},
  ${IDEMPOTENCY_CLAIM},
  ${SUBMISSION_FILES_EVENT},
  ${USAGE_COUNT}
SELECT ${ordinals('lost')} AS lost, ${ordinals('gone')} AS gone, (SELECT count(*) FROM received_counted) AS months`;

/**
 * Quota admission, for a group its quota could not take all of: claims the keys (`$1`–`$3`), holds
 * the posts' forms (no form may go away between admitting its posts and storing them: a unit
 * counted for nothing), then counts each account's month first, as many received posts as remain
 * (`intake_count_received`, partial), in (account, month) order. The posts of a month are listed in
 * order: the first `admitted` are admitted.
 */
export const CLAIM_AND_ADMIT = `WITH ${POSTS},
  ${IDEMPOTENCY_CLAIM},
  forms_held AS (SELECT id FROM forms WHERE id IN (SELECT form_id FROM posts) ORDER BY id FOR KEY SHARE),
  wanted AS MATERIALIZED (
    SELECT account_id, period, coalesce(min(quota), 0) AS quota, array_agg(n ORDER BY n) AS posts FROM live_posts
    WHERE status = 'received' AND n NOT IN (SELECT n FROM lost) AND (SELECT count(*) FROM forms_held) >= 0
    GROUP BY account_id, period ORDER BY account_id, period
  ),
  admitted AS (
    SELECT w.posts, intake_count_received(w.account_id, w.period, cardinality(w.posts), w.quota, true) AS admitted
    FROM wanted w
  )
SELECT ${ordinals('lost')} AS lost, (SELECT coalesce(json_agg(a), '[]') FROM admitted a) AS months`;

/** A refused post keeps no claim: a retry with its key must be able to succeed (`$1` claimed posts, as `form_id`, `key`, `submission_id`). */
export const WITHDRAW_CLAIMS = `DELETE FROM idempotency_keys k
  USING json_to_recordset($1::json) AS w(form_id text, key text, submission_id text)
  WHERE k.form_id = w.form_id AND k.key = w.key AND k.submission_id = w.submission_id`;

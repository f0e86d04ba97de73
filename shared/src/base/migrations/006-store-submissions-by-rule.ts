import type { Knex } from 'knex';
import * as storeSubmissions002 from './002-store-submissions';

/**
 * The central write, one function per rule, called by `intake_store_submissions` in one
 * transaction (ingest sends a group of posts in one round trip; `shared/src/submissions/store.ts`
 * reads as the map of it). A post is one element of `p_items` (its submission and files as JSON)
 * and the same element of `p_events` (its `submission.created` event, the very text that is
 * published); its ordinal `n` is its place in the group, from 0.
 *
 * - `intake_claim_idempotency_keys`: claims in (form, key) order, so two groups never wait on each
 *   other in a cycle; of two posts with one key the first wins; a key held by an unexpired claim,
 *   or by another transaction that then commits, is lost (the post is not stored).
 * - `intake_count_received`: THE count of received submissions in an account's month
 *   (`usage_counters.used`), also called by management when an owner marks a post received.
 *   Without a quota it counts; with one, all or nothing, or (`p_partial`) as many as remain.
 * - `intake_admit_received` (ingest's second try, after a group ran into its quota): forms
 *   key-share locked, then each account's month counted first and its received posts admitted
 *   in order while units remain; a refused post keeps no idempotency claim.
 * - `intake_insert_posts`: the submission, its files and its outbox event, for every post whose
 *   form still exists (a form deleted after ingest read it: `gone`); the received ones per month.
 * - `intake_count_group` (first try, last, so the counter row stays locked only for the commit):
 *   an account whose quota cannot take all of its posts raises IQ001 and nothing of the group is
 *   stored. Spam is never counted.
 *
 * A lock not granted within 5 s raises 55P03 (lock_timeout, for the transaction).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION intake_store_submissions(json, json, boolean)');
  await knex.raw(CLAIM_IDEMPOTENCY_KEYS);
  await knex.raw(COUNT_RECEIVED);
  await knex.raw(ADMIT_RECEIVED);
  await knex.raw(INSERT_POSTS);
  await knex.raw(COUNT_GROUP);
  await knex.raw(STORE_SUBMISSIONS);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION intake_store_submissions(text[], text[], json, boolean)');
  for (const f of [
    'intake_count_group(json)',
    'intake_insert_posts(text[], text[], int[])',
    'intake_admit_received(text[], json, int[])',
    'intake_count_received(text, date, int, int, boolean)',
    'intake_claim_idempotency_keys(json)',
  ])
    await knex.raw(`DROP FUNCTION ${f}`);
  await storeSubmissions002.up(knex);
}

/** The posts of a group as rows: `p_items[n + 1]` is post `n` (with its event, `p_events[n + 1]`, when `withEvents`). */
const posts = (withEvents: boolean) => `
  SELECT (t.o - 1)::int AS n, i.*${withEvents ? ', t.event::json AS event' : ''}
  FROM unnest(p_items${withEvents ? ', p_events' : ''}) WITH ORDINALITY AS t(item${withEvents ? ', event' : ''}, o),
       json_to_record(t.item::json) AS i(
         id text, account_id text, form_id text, status text, payload json, ip text, user_agent text,
         referrer text, spam_reason text, received_at timestamptz, files json, event_id text, subject text,
         headers jsonb, period date, quota int)`;

const CLAIM_IDEMPOTENCY_KEYS = `
  CREATE FUNCTION intake_claim_idempotency_keys(p_claims json, OUT lost int[]) LANGUAGE plpgsql AS $$
  DECLARE c record;
  BEGIN
    lost := '{}';
    FOR c IN SELECT * FROM json_to_recordset(p_claims)
               AS k(n int, form_id text, key text, submission_id text, created_at timestamptz, expires_at timestamptz)
             WHERE EXISTS (SELECT 1 FROM forms f WHERE f.id = k.form_id) ORDER BY k.form_id, k.key, k.n LOOP
      INSERT INTO idempotency_keys AS k (form_id, key, submission_id, created_at, expires_at)
        VALUES (c.form_id, c.key, c.submission_id, c.created_at, c.expires_at)
        ON CONFLICT (form_id, key) DO UPDATE
          SET submission_id = excluded.submission_id, created_at = excluded.created_at, expires_at = excluded.expires_at
          WHERE k.expires_at <= excluded.created_at;
      IF NOT FOUND THEN
        lost := lost || c.n;
      END IF;
    END LOOP;
  END $$`;

const COUNT_RECEIVED = `
  CREATE FUNCTION intake_count_received(p_account text, p_period date, p_count int, p_quota int, p_partial boolean)
  RETURNS int LANGUAGE plpgsql AS $$
  DECLARE counted int;
  BEGIN
    IF p_quota IS NULL THEN
      INSERT INTO usage_counters AS u (account_id, period, used) VALUES (p_account, p_period, p_count)
        ON CONFLICT (account_id, period) DO UPDATE SET used = u.used + excluded.used;
      RETURN p_count;
    END IF;
    IF NOT p_partial THEN
      UPDATE usage_counters SET used = used + p_count
        WHERE account_id = p_account AND period = p_period AND used + p_count <= p_quota;
      IF FOUND THEN RETURN p_count; END IF;
      IF p_count > p_quota THEN RETURN 0; END IF;
      INSERT INTO usage_counters AS u (account_id, period, used) VALUES (p_account, p_period, p_count)
        ON CONFLICT (account_id, period) DO UPDATE SET used = u.used + excluded.used WHERE u.used + excluded.used <= p_quota;
      RETURN CASE WHEN FOUND THEN p_count ELSE 0 END;
    END IF;
    INSERT INTO usage_counters (account_id, period, used) VALUES (p_account, p_period, 0)
      ON CONFLICT (account_id, period) DO NOTHING;
    SELECT greatest(0, least(p_count, p_quota - u.used)) INTO counted
      FROM usage_counters u WHERE u.account_id = p_account AND u.period = p_period FOR UPDATE;
    IF counted > 0 THEN
      UPDATE usage_counters SET used = used + counted WHERE account_id = p_account AND period = p_period;
    END IF;
    RETURN counted;
  END $$`;

const ADMIT_RECEIVED = `
  CREATE FUNCTION intake_admit_received(p_items text[], p_claims json, p_lost int[], OUT refused int[])
  LANGUAGE plpgsql AS $$
  DECLARE
    c record;
    admitted int;
  BEGIN
    refused := '{}';
    -- No form may go away between admitting its posts and storing them (a unit counted for nothing).
    PERFORM 1 FROM forms WHERE id IN (SELECT form_id FROM (${posts(false)}) p) ORDER BY id FOR KEY SHARE;
    FOR c IN SELECT p.account_id, p.period, min(p.quota) AS quota, array_agg(p.n ORDER BY p.n) AS posts
             FROM (${posts(false)}) p
             WHERE p.status = 'received' AND NOT p.n = ANY (p_lost) AND EXISTS (SELECT 1 FROM forms f WHERE f.id = p.form_id)
             GROUP BY p.account_id, p.period ORDER BY p.account_id, p.period LOOP
      admitted := intake_count_received(c.account_id, c.period, cardinality(c.posts), coalesce(c.quota, 0), true);
      refused := refused || c.posts[admitted + 1:];
    END LOOP;
    IF p_claims IS NOT NULL AND cardinality(refused) > 0 THEN
      DELETE FROM idempotency_keys k USING json_to_recordset(p_claims) AS w(n int, form_id text, key text, submission_id text)
        WHERE w.n = ANY (refused) AND k.form_id = w.form_id AND k.key = w.key AND k.submission_id = w.submission_id;
    END IF;
  END $$`;

const INSERT_POSTS = `
  CREATE FUNCTION intake_insert_posts(p_items text[], p_events text[], p_skip int[], OUT gone int[], OUT received json)
  LANGUAGE plpgsql AS $$
  BEGIN
    WITH posts AS MATERIALIZED (
      SELECT p.*, EXISTS (SELECT 1 FROM forms f WHERE f.id = p.form_id) AS live FROM (${posts(true)}) p WHERE NOT p.n = ANY (p_skip)
    ),
    kept AS MATERIALIZED (SELECT * FROM posts WHERE live),
    submissions_stored AS (
      INSERT INTO submissions
          (id, account_id, form_id, status, payload, file_count, file_bytes, ip, user_agent, referrer, spam_reason, received_at)
        SELECT id, account_id, form_id, status, coalesce(payload, event -> 'payload'), coalesce(json_array_length(files), 0),
               (event ->> 'file_bytes')::bigint, ip, user_agent, referrer, spam_reason, received_at
        FROM kept ORDER BY n
    ),
    files_stored AS (
      INSERT INTO submission_files (id, submission_id, account_id, field, filename, content_type, size, storage_key, created_at)
        SELECT f.id, kept.id, kept.account_id, f.field, f.filename, f.content_type, f.size, f.storage_key, kept.received_at
        FROM kept CROSS JOIN LATERAL json_to_recordset(kept.files)
             AS f(id text, field text, filename text, content_type text, size bigint, storage_key text)
        WHERE kept.files IS NOT NULL
    ),
    events_written AS (
      INSERT INTO outbox (event_id, subject, payload, headers) SELECT event_id, subject, event, headers FROM kept ORDER BY n
    )
    SELECT (SELECT coalesce(array_agg(n ORDER BY n), '{}') FROM posts WHERE NOT live),
           (SELECT json_agg(t ORDER BY t.account_id, t.period)
            FROM (SELECT account_id, period, count(*)::int AS posts, min(quota) AS quota
                  FROM kept WHERE status = 'received' GROUP BY account_id, period) t)
      INTO gone, received;
  END $$`;

const COUNT_GROUP = `
  CREATE FUNCTION intake_count_group(p_received json) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE c record;
  BEGIN
    FOR c IN SELECT * FROM json_to_recordset(p_received) AS t(account_id text, period date, posts int, quota int) LOOP
      IF intake_count_received(c.account_id, c.period, c.posts, coalesce(c.quota, 0), false) < c.posts THEN
        RAISE EXCEPTION 'the monthly quota of account % cannot take % more submissions', c.account_id, c.posts
          USING ERRCODE = 'IQ001';
      END IF;
    END LOOP;
  END $$`;

const STORE_SUBMISSIONS = `
  CREATE FUNCTION intake_store_submissions(
    p_items text[], p_events text[], p_claims json, p_admit boolean, OUT lost int[], OUT refused int[], OUT gone int[]
  ) LANGUAGE plpgsql AS $$
  DECLARE received json;
  BEGIN
    -- A row locked for long (a form or an account being deleted) fails the group (55P03) instead of stalling every post behind it.
    PERFORM set_config('lock_timeout', '5s', true);
    lost := CASE WHEN p_claims IS NULL THEN '{}' ELSE intake_claim_idempotency_keys(p_claims) END;
    refused := CASE WHEN p_admit THEN intake_admit_received(p_items, p_claims, lost) ELSE '{}' END;
    SELECT w.gone, w.received INTO gone, received FROM intake_insert_posts(p_items, p_events, lost || refused) w;
    IF NOT p_admit THEN
      PERFORM intake_count_group(received);
    END IF;
  END $$`;

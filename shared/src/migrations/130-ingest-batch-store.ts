import type { Knex } from 'knex';

/**
 * Ingest stores the posts that arrive while its previous write is in flight as ONE transaction:
 * `intake_store_submissions(items, claims)` (one call, one commit, one WAL flush for the batch).
 * In that transaction, for every item:
 *
 * 1. its idempotency claim, when it has a key (`claims`), in (form, key) order, so two batches
 *    never wait on each other in a cycle. A key held by an unexpired claim, or by another
 *    transaction that then commits, is lost: the item is not stored and its ordinal is returned;
 * 2. the submission, its files and its outbox event (every item that did not lose its claim);
 * 3. last, the received items counted against their account's month, one conditional update per
 *    (account, month) in that order. Counting last keeps the counter row locked only for the
 *    commit. When an account's quota cannot take all of its items, the function raises
 *    SQLSTATE `IQ001` and NOTHING of the batch is stored: ingest then stores those items one at a
 *    time (a batch of one), which stops exactly at the quota.
 *
 * Returns the ordinals (`n`) of the items that lost their idempotency claim. Any error rolls back
 * the whole batch; ingest then retries its items one by one, so one bad item fails alone.
 *
 * `intake_store_submission` (migration 100) stays for the previous release's ingest while a
 * rolling upgrade replaces it; a later release drops it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION intake_store_submissions(p_items json, p_claims json) RETURNS int[]
    LANGUAGE plpgsql AS $$
    DECLARE
      lost int[] := '{}';
      c record;
      counts json;
    BEGIN
      IF p_claims IS NOT NULL THEN
        FOR c IN SELECT * FROM json_to_recordset(p_claims) AS k(n int, form_id text, key text, submission_id text, created_at timestamptz, expires_at timestamptz) ORDER BY form_id, key LOOP
          INSERT INTO idempotency_keys AS k (form_id, key, submission_id, created_at, expires_at)
            VALUES (c.form_id, c.key, c.submission_id, c.created_at, c.expires_at)
            ON CONFLICT (form_id, key) DO UPDATE
              SET submission_id = excluded.submission_id, created_at = excluded.created_at, expires_at = excluded.expires_at
              WHERE k.expires_at <= excluded.created_at;
          IF NOT FOUND THEN
            lost := lost || c.n;
          END IF;
        END LOOP;
      END IF;

      WITH items AS MATERIALIZED (
        SELECT * FROM json_to_recordset(p_items) AS i(
          n int, id text, account_id text, form_id text, status text, payload json, file_count int, file_bytes bigint,
          ip text, user_agent text, referrer text, spam_reason text, received_at timestamptz, files json,
          event_id text, subject text, event json, headers jsonb, period date, quota int)
        WHERE NOT i.n = ANY (lost)
      ),
      stored AS (
        INSERT INTO submissions (id, account_id, form_id, status, payload, file_count, file_bytes, ip, user_agent, referrer, spam_reason, received_at)
          SELECT id, account_id, form_id, status, payload, file_count, file_bytes, ip, user_agent, referrer, spam_reason, received_at FROM items ORDER BY n
      ),
      filed AS (
        INSERT INTO submission_files (id, submission_id, account_id, field, filename, content_type, size, storage_key, created_at)
          SELECT f.id, items.id, items.account_id, f.field, f.filename, f.content_type, f.size, f.storage_key, items.received_at
          FROM items CROSS JOIN LATERAL json_to_recordset(items.files) AS f(id text, field text, filename text, content_type text, size bigint, storage_key text)
          WHERE items.file_count > 0
      ),
      published AS (
        INSERT INTO outbox (event_id, subject, payload, headers) SELECT event_id, subject, event, headers FROM items ORDER BY n
      )
      SELECT json_agg(t ORDER BY t.account_id, t.period) INTO counts
      FROM (SELECT account_id, period, count(*)::int AS used, min(quota) AS quota FROM items WHERE status = 'received' GROUP BY account_id, period) t;

      FOR c IN SELECT * FROM json_to_recordset(counts) AS t(account_id text, period date, used int, quota int) LOOP
        UPDATE usage_counters SET used = used + c.used WHERE account_id = c.account_id AND period = c.period AND used + c.used <= c.quota;
        IF NOT FOUND THEN
          IF c.used <= c.quota THEN
            INSERT INTO usage_counters AS u (account_id, period, used) VALUES (c.account_id, c.period, c.used)
              ON CONFLICT (account_id, period) DO UPDATE SET used = u.used + c.used WHERE u.used + c.used <= c.quota;
          END IF;
          IF c.used > c.quota OR NOT FOUND THEN
            RAISE EXCEPTION 'the monthly quota of account % cannot take % more submissions', c.account_id, c.used USING ERRCODE = 'IQ001';
          END IF;
        END IF;
      END LOOP;
      RETURN lost;
    END $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS intake_store_submissions(json, json)');
}

import type { Knex } from 'knex';

/**
 * The group write's first form, a PL/pgSQL function: migration 006 removes it, and the write is now one
 * statement built in TypeScript (shared/src/submissions/store-submissions.sql.ts). Kept as applied.
 */
const STORE_SUBMISSIONS_FUNCTION = `
    CREATE FUNCTION intake_store_submissions(
      p_items json, p_claims json, p_admit boolean, OUT lost int[], OUT refused int[], OUT gone int[]
    )
    LANGUAGE plpgsql AS $$
    DECLARE
      c record;
      counts json;
      used_now int;
      granted int;
    BEGIN
      -- A row locked for long (a form or an account being deleted) fails the group (55P03) instead of stalling every post behind it.
      PERFORM set_config('lock_timeout', '5s', true);
      lost := '{}';
      refused := '{}';
      IF p_claims IS NOT NULL THEN
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
      END IF;

      IF p_admit THEN
        -- No form may go away between admitting its posts and storing them (a unit counted for nothing).
        PERFORM 1 FROM forms WHERE id IN (SELECT i.form_id FROM json_to_recordset(p_items) AS i(form_id text)) ORDER BY id FOR KEY SHARE;
        FOR c IN SELECT i.account_id, i.period, min(i.quota) AS quota, array_agg(i.n ORDER BY i.n) AS posts
                 FROM json_to_recordset(p_items) AS i(n int, account_id text, form_id text, status text, period date, quota int)
                 WHERE i.status = 'received' AND NOT i.n = ANY (lost) AND EXISTS (SELECT 1 FROM forms f WHERE f.id = i.form_id)
                 GROUP BY i.account_id, i.period ORDER BY i.account_id, i.period LOOP
          INSERT INTO usage_counters (account_id, period, used) VALUES (c.account_id, c.period, 0)
            ON CONFLICT (account_id, period) DO NOTHING;
          SELECT u.used INTO used_now FROM usage_counters u WHERE u.account_id = c.account_id AND u.period = c.period FOR UPDATE;
          granted := greatest(0, least(cardinality(c.posts), coalesce(c.quota, 0) - used_now));
          IF granted > 0 THEN
            UPDATE usage_counters SET used = used + granted WHERE account_id = c.account_id AND period = c.period;
          END IF;
          refused := refused || c.posts[granted + 1:];
        END LOOP;
        -- A refused post keeps no claim: a retry with its key must be able to succeed.
        IF p_claims IS NOT NULL AND cardinality(refused) > 0 THEN
          DELETE FROM idempotency_keys k USING json_to_recordset(p_claims) AS w(n int, form_id text, key text, submission_id text)
            WHERE w.n = ANY (refused) AND k.form_id = w.form_id AND k.key = w.key AND k.submission_id = w.submission_id;
        END IF;
      END IF;

      WITH items AS MATERIALIZED (
        SELECT i.*, EXISTS (SELECT 1 FROM forms f WHERE f.id = i.form_id) AS live
        FROM json_to_recordset(p_items) AS i(
          n int, id text, account_id text, form_id text, status text, payload json,
          ip text, user_agent text, referrer text, spam_reason text, received_at timestamptz, files json,
          event_id text, subject text, event json, headers jsonb, period date, quota int)
        WHERE NOT i.n = ANY (lost || refused)
      ),
      kept AS MATERIALIZED (SELECT * FROM items WHERE live),
      stored AS (
        INSERT INTO submissions
            (id, account_id, form_id, status, payload, file_count, file_bytes, ip, user_agent, referrer, spam_reason, received_at)
          SELECT id, account_id, form_id, status, coalesce(payload, event -> 'payload'), coalesce(json_array_length(files), 0),
                 (event ->> 'file_bytes')::bigint, ip, user_agent, referrer, spam_reason, received_at
          FROM kept ORDER BY n
      ),
      filed AS (
        INSERT INTO submission_files (id, submission_id, account_id, field, filename, content_type, size, storage_key, created_at)
          SELECT f.id, kept.id, kept.account_id, f.field, f.filename, f.content_type, f.size, f.storage_key, kept.received_at
          FROM kept CROSS JOIN LATERAL json_to_recordset(kept.files)
               AS f(id text, field text, filename text, content_type text, size bigint, storage_key text)
          WHERE kept.files IS NOT NULL
      ),
      published AS (
        INSERT INTO outbox (event_id, subject, payload, headers) SELECT event_id, subject, event, headers FROM kept ORDER BY n
      )
      SELECT (SELECT coalesce(array_agg(n ORDER BY n), '{}') FROM items WHERE NOT live),
             (SELECT json_agg(t ORDER BY t.account_id, t.period)
              FROM (SELECT account_id, period, count(*)::int AS used, min(quota) AS quota
                    FROM kept WHERE status = 'received' GROUP BY account_id, period) t)
        INTO gone, counts;

      IF NOT p_admit THEN
        FOR c IN SELECT * FROM json_to_recordset(counts) AS t(account_id text, period date, used int, quota int) LOOP
          UPDATE usage_counters SET used = used + c.used WHERE account_id = c.account_id AND period = c.period AND used + c.used <= c.quota;
          IF NOT FOUND THEN
            IF c.used <= c.quota THEN
              INSERT INTO usage_counters AS u (account_id, period, used) VALUES (c.account_id, c.period, c.used)
                ON CONFLICT (account_id, period) DO UPDATE SET used = u.used + c.used WHERE u.used + c.used <= c.quota;
            END IF;
            IF NOT (c.used <= c.quota) OR NOT FOUND THEN
              RAISE EXCEPTION 'the monthly quota of account % cannot take % more submissions', c.account_id, c.used USING ERRCODE = 'IQ001';
            END IF;
          END IF;
        END LOOP;
      END IF;
    END $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(STORE_SUBMISSIONS_FUNCTION);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS intake_store_submissions(json, json, boolean)');
}

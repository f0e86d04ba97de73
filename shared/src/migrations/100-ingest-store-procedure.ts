import type { Knex } from 'knex';

/**
 * Ingest stores an accepted post with ONE call (one round trip) that runs two transactions:
 *
 * 1. A received post is counted against the month's quota: a conditional upsert of the account's
 *    counter row, committed at once WITHOUT waiting for the WAL flush (`synchronous_commit` off,
 *    local to that transaction). The hot row is locked only while the statement runs, not for an
 *    fsync, so one account's posts do not queue behind each other's commits. Quota used up →
 *    `quota-exceeded`, nothing written.
 * 2. The submission, its files, its outbox event and its idempotency claim, in one durable
 *    transaction; its flush also makes the earlier count durable (the WAL is sequential). An
 *    idempotency key held by another request (Postgres makes a concurrent claimer wait for the
 *    holder's commit) → `lost-idempotency-race`: nothing written and the unit given back.
 *
 * When step 2 raises (e.g. the form was deleted meanwhile), the procedure catches it, gives the
 * unit back (only a unit it counted), and answers `failed` with the SQLSTATE and message in
 * `failure`. Errors before the count's commit (bad parameters, the count itself) are raised as
 * usual, and nothing was counted.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE PROCEDURE intake_store_submission(
      p_id text, p_account_id text, p_form_id text, p_status text, p_payload json,
      p_file_count int, p_file_bytes bigint, p_ip text, p_user_agent text, p_referrer text,
      p_spam_reason text, p_received_at timestamptz, p_files jsonb,
      p_event_id text, p_subject text, p_event json, p_headers jsonb,
      p_period date, p_quota int, p_idempotency_key text, p_idempotency_expires_at timestamptz,
      INOUT outcome text DEFAULT NULL, INOUT failure text DEFAULT NULL)
    LANGUAGE plpgsql AS $$
    DECLARE
      counted boolean := p_status = 'received';
      failed_state text;
      failed_message text;
    BEGIN
      IF counted THEN
        IF p_quota <= 0 THEN
          outcome := 'quota-exceeded';
          RETURN;
        END IF;
        PERFORM set_config('synchronous_commit', 'off', true);
        -- The month's row exists after its first post: a plain update (no speculative insert, no extra row-lock record).
        UPDATE usage_counters SET used = used + 1 WHERE account_id = p_account_id AND period = p_period AND used < p_quota;
        IF NOT FOUND THEN
          INSERT INTO usage_counters AS u (account_id, period, used) VALUES (p_account_id, p_period, 1)
            ON CONFLICT (account_id, period) DO UPDATE SET used = u.used + 1 WHERE u.used < p_quota;
          IF NOT FOUND THEN
            outcome := 'quota-exceeded';
            RETURN;
          END IF;
        END IF;
        COMMIT;
      END IF;

      BEGIN
        IF p_idempotency_key IS NOT NULL THEN
          INSERT INTO idempotency_keys AS k (form_id, key, submission_id, created_at, expires_at)
            VALUES (p_form_id, p_idempotency_key, p_id, p_received_at, p_idempotency_expires_at)
            ON CONFLICT (form_id, key) DO UPDATE
              SET submission_id = excluded.submission_id, created_at = excluded.created_at, expires_at = excluded.expires_at
              WHERE k.expires_at <= excluded.created_at;
          IF NOT FOUND THEN
            IF counted THEN
              PERFORM set_config('synchronous_commit', 'off', true);
              UPDATE usage_counters SET used = used - 1 WHERE account_id = p_account_id AND period = p_period AND used > 0;
            END IF;
            outcome := 'lost-idempotency-race';
            RETURN;
          END IF;
        END IF;

        INSERT INTO submissions (id, account_id, form_id, status, payload, file_count, file_bytes, ip, user_agent, referrer, spam_reason, received_at)
          VALUES (p_id, p_account_id, p_form_id, p_status, p_payload, p_file_count, p_file_bytes, p_ip, p_user_agent, p_referrer, p_spam_reason, p_received_at);
        IF p_file_count > 0 THEN
          INSERT INTO submission_files (id, submission_id, account_id, field, filename, content_type, size, storage_key, created_at)
            SELECT f.id, p_id, p_account_id, f.field, f.filename, f.content_type, f.size, f.storage_key, p_received_at
            FROM jsonb_to_recordset(p_files) AS f(id text, field text, filename text, content_type text, size bigint, storage_key text);
        END IF;
        INSERT INTO outbox (event_id, subject, payload, headers) VALUES (p_event_id, p_subject, p_event, p_headers);
      EXCEPTION WHEN OTHERS THEN
        -- Rolled back to the block's start (nothing of the submission stays); the count committed.
        GET STACKED DIAGNOSTICS failed_state = RETURNED_SQLSTATE, failed_message = MESSAGE_TEXT;
      END;

      IF failed_state IS NOT NULL THEN
        IF counted THEN
          PERFORM set_config('synchronous_commit', 'off', true);
          UPDATE usage_counters SET used = used - 1 WHERE account_id = p_account_id AND period = p_period AND used > 0;
        END IF;
        outcome := 'failed';
        failure := failed_state || ' ' || failed_message;
        RETURN;
      END IF;
      outcome := 'stored';
    END $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP PROCEDURE IF EXISTS intake_store_submission');
}

import type { Knex } from 'knex';
import * as storeSubmissions002 from './002-store-submissions';

/**
 * Storing a group of posts becomes one statement that ingest's store sends
 * (`shared/src/submissions/store-submissions.sql.ts`, its parts named after the rules): the
 * PL/pgSQL function that held them (002) goes. What stays in the database is the count of received
 * submissions, the one place `usage_counters.used` is written (ingest's statement and management's
 * mark-as-received both call it): without a quota it counts; with one, all or nothing, raising
 * IQ001 when the month cannot take them all (nothing of the caller's transaction is kept), or
 * (`p_partial`) as many as remain, returning how many it counted.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION intake_store_submissions(json, json, boolean)');
  await knex.raw(`
    CREATE OR REPLACE FUNCTION intake_count_received(
      p_account text, p_period date, p_count int, p_quota int, p_partial boolean
    ) RETURNS int LANGUAGE plpgsql AS $$
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
        IF p_count <= p_quota THEN
          INSERT INTO usage_counters AS u (account_id, period, used) VALUES (p_account, p_period, p_count)
            ON CONFLICT (account_id, period) DO UPDATE SET used = u.used + excluded.used
            WHERE u.used + excluded.used <= p_quota;
          IF FOUND THEN RETURN p_count; END IF;
        END IF;
        RAISE EXCEPTION 'the monthly quota of account % cannot take % more submissions', p_account, p_count
          USING ERRCODE = 'IQ001';
      END IF;
      INSERT INTO usage_counters (account_id, period, used) VALUES (p_account, p_period, 0)
        ON CONFLICT (account_id, period) DO NOTHING;
      SELECT greatest(0, least(p_count, p_quota - u.used)) INTO counted
        FROM usage_counters u WHERE u.account_id = p_account AND u.period = p_period FOR UPDATE;
      IF counted > 0 THEN
        UPDATE usage_counters SET used = used + counted WHERE account_id = p_account AND period = p_period;
      END IF;
      RETURN counted;
    END $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION intake_count_received(text, date, int, int, boolean)');
  await storeSubmissions002.up(knex);
}

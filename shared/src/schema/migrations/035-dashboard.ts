import type { Knex } from 'knex';

/**
 * What the dashboards read without scanning submissions: the unread ones per form (a partial index of received
 * submissions out of the trash that nobody opened, counted up to a cap), usage per account and day, and
 * `usage_daily_projects`: usage per project and day, rolled up by the usage consumer as it counts each batch (with the
 * project its form is in then) and moved along with a form that changes project, so that a chart of 90 days reads 90
 * rows per project whatever the number of forms. Filled here from `usage_daily`. CONCURRENTLY: ingest keeps writing
 * while this runs. A build killed mid-way (a Job killed, a lost connection) leaves an INVALID index that IF NOT EXISTS
 * would keep (maintained on every insert, never used): it is dropped and built again, as in 016, 018, 020 and 023.
 */
export const config = { transaction: false };

/** Drops the index if a killed CONCURRENTLY build left it INVALID. */
async function dropIfInvalid(knex: Knex, index: string): Promise<void> {
  const valid = await knex.raw<{ rows: { valid: boolean }[] }>(
    'SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass(?)',
    [index],
  );
  if (valid.rows[0]?.valid === false) await knex.raw(`DROP INDEX CONCURRENTLY ${index}`);
}

export async function up(knex: Knex): Promise<void> {
  await dropIfInvalid(knex, 'submissions_unread_idx');
  await knex.raw(
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS submissions_unread_idx ON submissions (form_id)
     WHERE read_at IS NULL AND status = 'received' AND deleted_at IS NULL`,
  );
  await dropIfInvalid(knex, 'usage_daily_day_idx');
  await knex.raw('CREATE INDEX CONCURRENTLY IF NOT EXISTS usage_daily_day_idx ON usage_daily (account_id, day)');
  await knex.raw(`CREATE TABLE IF NOT EXISTS usage_daily_projects (
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    day date NOT NULL,
    received integer NOT NULL DEFAULT 0,
    spam integer NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, project_id, day)
  )`);
  await knex.raw(`INSERT INTO usage_daily_projects (account_id, project_id, day, received, spam)
    SELECT u.account_id, f.project_id, u.day, sum(u.received), sum(u.spam)
    FROM usage_daily u JOIN forms f ON f.id = u.form_id GROUP BY 1, 2, 3
    ON CONFLICT DO NOTHING`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS usage_daily_projects');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS usage_daily_day_idx');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS submissions_unread_idx');
}

import type { Knex } from 'knex';

/**
 * The ingest rate limit an owner sees and sets (defect 23 of the 2026-12-01 review):
 * - `plans.max_rate_limit`: the most posts per address and window a form of the plan may allow (Free 60, Pro 600,
 *   Team 3000);
 * - `forms.rate_limit`: the form's own limit, 1 to its plan's most; null takes the deployment's RATE_LIMIT_POINTS;
 * - `rate_limit_refusals`: the posts ingest refused with 429, per form and UTC day (added up in batches).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `ALTER TABLE plans ADD COLUMN max_rate_limit integer NOT NULL DEFAULT 600 CHECK (max_rate_limit >= 1)`,
  );
  await knex.raw(`UPDATE plans SET max_rate_limit = CASE id WHEN 'free' THEN 60 WHEN 'team' THEN 3000 ELSE 600 END`);
  await knex.raw(`ALTER TABLE forms ADD COLUMN rate_limit integer CHECK (rate_limit >= 1)`);
  await knex.raw(
    `COMMENT ON COLUMN forms.rate_limit IS 'posts per address and RATE_LIMIT_WINDOW_SECONDS; null: RATE_LIMIT_POINTS'`,
  );
  await knex.schema.createTable('rate_limit_refusals', (t) => {
    t.text('form_id').notNullable().references('forms.id').onDelete('CASCADE');
    t.date('day').notNullable().comment('UTC day');
    t.integer('refused').notNullable().defaultTo(0);
    t.timestamp('last_at', { precision: 3 }).notNullable();
    t.primary(['form_id', 'day']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('rate_limit_refusals');
  await knex.raw('ALTER TABLE forms DROP COLUMN IF EXISTS rate_limit');
  await knex.raw('ALTER TABLE plans DROP COLUMN IF EXISTS max_rate_limit');
}

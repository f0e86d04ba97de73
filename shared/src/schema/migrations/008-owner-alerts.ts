import type { Knex } from 'knex';

/**
 * What owners hear about: a form's autoresponse (the confirmation mailed to whoever filled it in),
 * a webhook's format (its signed JSON or a chat service's message) and its health (kept as attempts
 * are recorded, so reading it costs one row), a webhook disabled for failing, and deliveries queued
 * for a replay that a pump sends at a bounded rate.
 *
 * `forms.autoresponse` is json, not jsonb: its text is shown as the owner wrote it.
 * An autoresponse is a `notifications` row (kind `autoresponse`, dedup key `autoresponse:<submission id>`).
 * `autoresponse_sends` remembers the last autoresponse per form and recipient, so a flood of posts
 * naming one address sends it one mail per window.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE forms ADD COLUMN autoresponse json`);
  await knex.raw(`ALTER TABLE webhooks
    ADD COLUMN format text NOT NULL DEFAULT 'standard',
    ADD COLUMN disabled_reason text,
    ADD COLUMN last_success_at timestamptz(3),
    ADD COLUMN last_failure_at timestamptz(3),
    ADD COLUMN failing_since timestamptz(3),
    ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0,
    ADD COLUMN alerted_at timestamptz(3)`);
  await knex.raw(
    `ALTER TABLE webhooks ADD CONSTRAINT webhooks_format_check CHECK (format IN ('standard', 'slack', 'discord', 'teams'))`,
  );
  await knex.raw(
    `ALTER TABLE webhooks ADD CONSTRAINT webhooks_disabled_reason_check CHECK (disabled_reason IN ('failing'))`,
  );
  // The health sweeper looks only at webhooks that fail.
  await knex.raw(
    `CREATE INDEX webhooks_failing_idx ON webhooks (failing_since) WHERE failing_since IS NOT NULL AND enabled`,
  );
  await knex.raw(`ALTER TABLE deliveries ADD COLUMN replay_queued_at timestamptz(3)`);
  await knex.raw(
    `CREATE INDEX deliveries_replay_queued_idx ON deliveries (replay_queued_at, id) WHERE replay_queued_at IS NOT NULL`,
  );
  await knex.schema.createTable('autoresponse_sends', (t) => {
    t.text('form_id').notNullable().references('forms.id').onDelete('CASCADE');
    t.text('recipient').notNullable().comment('lower-cased address');
    t.timestamp('sent_at', { precision: 3 }).notNullable();
    t.primary(['form_id', 'recipient']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('autoresponse_sends');
  await knex.raw('DROP INDEX IF EXISTS deliveries_replay_queued_idx');
  await knex.raw('ALTER TABLE deliveries DROP COLUMN IF EXISTS replay_queued_at');
  await knex.raw('DROP INDEX IF EXISTS webhooks_failing_idx');
  await knex.raw(`ALTER TABLE webhooks DROP CONSTRAINT IF EXISTS webhooks_disabled_reason_check,
    DROP CONSTRAINT IF EXISTS webhooks_format_check, DROP COLUMN IF EXISTS format, DROP COLUMN IF EXISTS disabled_reason,
    DROP COLUMN IF EXISTS last_success_at, DROP COLUMN IF EXISTS last_failure_at, DROP COLUMN IF EXISTS failing_since,
    DROP COLUMN IF EXISTS consecutive_failures, DROP COLUMN IF EXISTS alerted_at`);
  await knex.raw('ALTER TABLE forms DROP COLUMN IF EXISTS autoresponse');
}

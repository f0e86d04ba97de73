import type { Knex } from 'knex';

/**
 * Integrations (Google Sheets, Airtable, Notion) are webhooks of their own format: the same deliveries, attempts,
 * health, replay and alerts, with where they write (`destination`: the spreadsheet and sheet, the base and table, the
 * database; never a credential) and the credential they write with (`credential`: a service account's key or an API
 * token, sealed with SECRETS_KEY like the signing secret, never shown again). `url` holds the destination's page, for
 * the owner to open.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE webhooks
    DROP CONSTRAINT webhooks_format_check,
    ADD CONSTRAINT webhooks_format_check
      CHECK (format IN ('standard', 'slack', 'discord', 'teams', 'google_sheets', 'airtable', 'notion')),
    -- not a payload: where an integration writes (ids and names the owner typed)
    ADD COLUMN destination jsonb,
    ADD COLUMN credential text,
    ADD CONSTRAINT webhooks_integration_check CHECK (
      (format IN ('google_sheets', 'airtable', 'notion')) = (destination IS NOT NULL AND credential IS NOT NULL))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DELETE FROM webhooks WHERE format IN ('google_sheets', 'airtable', 'notion')`);
  await knex.raw(`ALTER TABLE webhooks
    DROP CONSTRAINT IF EXISTS webhooks_integration_check,
    DROP COLUMN IF EXISTS destination,
    DROP COLUMN IF EXISTS credential,
    DROP CONSTRAINT webhooks_format_check,
    ADD CONSTRAINT webhooks_format_check CHECK (format IN ('standard', 'slack', 'discord', 'teams'))`);
}

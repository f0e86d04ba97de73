import type { Knex } from 'knex';

/**
 * The pages a visitor's browser is shown after a plain form post: the owner's title and message for the
 * thank-you page and for the page of a refused post; null keeps Intake's own, in the visitor's language.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE forms
    -- not a payload: the owner's two pages, each a named title and message, whose order means nothing
    ADD COLUMN IF NOT EXISTS pages jsonb`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE forms DROP COLUMN IF EXISTS pages');
}

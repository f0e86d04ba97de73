import type { Knex } from 'knex';

/**
 * Whose spam classifier a form uses: its project's (`project`, the default), trained on the marks and honeypot catches
 * of the project's forms that use it, or its own (`form`), trained on its own alone. An example stays with its
 * submission, so a form moved to another project takes its examples there.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE forms ADD COLUMN spam_model text NOT NULL DEFAULT 'project'
    CHECK (spam_model IN ('project', 'form'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE forms DROP COLUMN IF EXISTS spam_model');
}

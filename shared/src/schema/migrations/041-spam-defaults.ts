import type { Knex } from 'knex';

/**
 * New forms keep obvious spam from their clients on day one (docs/decisions/spam.md, "Defaults"): their filter is `on`
 * and their rules are the certain ones (disposable addresses, a link in a name, the shipped patterns of known spam)
 * with the starting model recording beside them. Only the columns' defaults change: a form made before keeps the
 * settings its owner has watched it run with (`shadow`, or whatever was chosen).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE forms ALTER COLUMN spam_filter SET DEFAULT 'on',
    ALTER COLUMN spam_rules SET DEFAULT '{"block_disposable":true,"links_in_name":true,"known_spam":true,"starting_model":true}'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    `ALTER TABLE forms ALTER COLUMN spam_filter SET DEFAULT 'shadow', ALTER COLUMN spam_rules SET DEFAULT '{}'`,
  );
}

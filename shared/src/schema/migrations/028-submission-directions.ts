import type { Knex } from 'knex';

/**
 * What a post's control fields asked of its notification (`_subject`, `_replyto`; ingest takes them out of the
 * payload, as it does the honeypot): kept with the submission, so a notification made again from it (a mail asked for
 * again by the reconciler, a submission marked not spam) says what the first would have. Null for almost every post;
 * a purge clears it with the payload (a reply-to address is the visitor's).
 */
export async function up(knex: Knex): Promise<void> {
  // not a payload: two named directions (subject, reply_to), whose order means nothing
  await knex.raw('ALTER TABLE submissions ADD COLUMN directions jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE submissions DROP COLUMN IF EXISTS directions');
}

import type { Knex } from 'knex';

/**
 * A notification e-mail's next attempt, in Postgres (as a delivery's is, 025 and 026). The fan-out writes the owner's
 * mail row when it asks for the mail, so a request lost with its stream (or purged, or restored from an older backup)
 * leaves a `pending` row behind; every claim, and every failed attempt, sets when the row is to be looked at again.
 * The delivery processes' pump asks again for each pending row that is due and that nobody holds (`lease_until`), so
 * nothing stays pending for ever; and a retry that waits longer than a minute leaves JetStream for here, so waiting
 * mails no longer count toward the mail consumer's `max_ack_pending`. Only pending rows are indexed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE notifications ADD COLUMN next_attempt_at timestamptz(3)');
  await knex.raw(
    `CREATE INDEX notifications_due_idx ON notifications (next_attempt_at)
     WHERE status = 'pending' AND next_attempt_at IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS notifications_due_idx');
  await knex.raw('ALTER TABLE notifications DROP COLUMN IF EXISTS next_attempt_at');
}

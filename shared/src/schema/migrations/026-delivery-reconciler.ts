import type { Knex } from 'knex';

/**
 * Where the delivery reconciler has got to. A delivery's request lives only in JetStream until its first attempts are
 * made (a retry over a minute waits in `delivery_parking`, 025); a stream that is lost, purged or restored from an
 * older backup takes those requests with it and the delivery would stay `pending` for ever. The reconciler walks
 * `deliveries` in id order (ids are ULIDs: creation order, by the primary key's index), once per delivery, when it is
 * `RECONCILE_AFTER` old: one still waiting is parked due at once, so the parking pump asks for its attempt and keeps
 * asking every five minutes until it ends. `position` is the last id walked; one process walks at a time (the row is
 * locked while it does).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE reconciler_cursors (
    name text PRIMARY KEY,
    position text NOT NULL,
    updated_at timestamptz(3) NOT NULL DEFAULT now()
  )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS reconciler_cursors');
}

import type { Knex } from 'knex';

/**
 * Webhook retries that wait longer than a minute leave JetStream: a nak with a delay keeps its message unacknowledged,
 * and every such message counts toward the send consumer's `max_ack_pending`, which, once full, stops JetStream from
 * handing out any message, for every account (12 failed first attempts a second would have filled 50,000 on the
 * ladder's hour). Such a delivery is parked here (its state, `next_attempt_at` included, stays in `deliveries`), its
 * message acknowledged, and the delivery workers' pump asks for its attempt again when it is due.
 *
 * A table of its own rather than an index on `deliveries`: only failing deliveries ever come here, and an index on a
 * delivery's status or next attempt would make every delivery's updates (claim, record) touch all its indexes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE delivery_parking (
    delivery_id text PRIMARY KEY REFERENCES deliveries (id) ON DELETE CASCADE,
    due_at timestamptz(3) NOT NULL
  )`);
  await knex.raw('CREATE INDEX delivery_parking_due_idx ON delivery_parking (due_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS delivery_parking');
}

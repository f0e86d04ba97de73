import type { Knex } from 'knex';

/**
 * Console sessions: a management key exchanged for a cookie. Only the sha256 of the session token is
 * stored; `key_id` ties the session to the key it was opened with, so revoking (or deleting) the key
 * ends it. `last_seen_at` drives the idle expiry, `expires_at` is the absolute one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('console_sessions', (t) => {
    t.text('token_hash').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('key_id').notNullable().references('api_keys.id').onDelete('CASCADE');
    t.text('csrf_token').notNullable();
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_seen_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { precision: 3 }).notNullable();
    t.index(['key_id']);
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('console_sessions');
}

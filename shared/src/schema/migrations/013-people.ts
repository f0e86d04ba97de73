import type { Knex } from 'knex';

/**
 * People: a person (`users`, one per e-mail address, across accounts) is a member of accounts with a
 * role; management keys carry a role too. Console sessions belong to a key or to a member, so removing
 * a member (cascade) ends their sessions and a role change is read on their next request. Secrets are
 * never stored in the clear: passwords as argon2id hashes, invitation and reset tokens and recovery codes
 * as sha256, TOTP secrets encrypted with SECRETS_KEY.
 *
 * `audit_log` is append-only: a trigger refuses UPDATE and DELETE unless the transaction set
 * `intake.audit_purge` (only the retention purge does). It has no foreign key, so an entry outlives
 * what it names.
 */
/** A table of single-use tokens (sha256) for rows of `references`: invitations and password resets. */
const singleUseTokens = (owner: string, references: string) => (t: Knex.CreateTableBuilder) => {
  t.text('token_hash').primary();
  t.text(owner).notNullable().references(references).onDelete('CASCADE');
  t.timestamp('expires_at', { precision: 3 }).notNullable();
  t.timestamp('used_at', { precision: 3 }).nullable();
  t.index([owner]);
};

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.text('id').primary();
    t.text('email').notNullable().unique().comment('lower case');
    t.text('name').nullable();
    t.text('password_hash').nullable().comment('argon2id (PHC string); null: no password (SSO only)');
    t.text('totp_secret').nullable().comment('encrypted with SECRETS_KEY');
    t.timestamp('totp_enabled_at', { precision: 3 }).nullable();
    // not a payload: hashes of recovery codes
    t.jsonb('recovery_codes').notNullable().defaultTo('[]').comment('sha256 of each unused recovery code');
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('members', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('email').notNullable().comment('lower case; the invitation is for this address');
    t.text('user_id').nullable().references('users.id').onDelete('CASCADE');
    t.text('role').notNullable();
    t.text('status').notNullable().defaultTo('invited');
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_sign_in_at', { precision: 3 }).nullable();
    t.unique(['account_id', 'email']);
    t.index(['user_id']);
  });
  await knex.raw(
    `ALTER TABLE members ADD CONSTRAINT members_role_check CHECK (role IN ('viewer', 'editor', 'admin', 'owner'))`,
  );
  await knex.raw(`ALTER TABLE members ADD CONSTRAINT members_status_check CHECK (status IN ('invited', 'active'))`);
  await knex.schema.createTable('member_invitations', singleUseTokens('member_id', 'members.id'));
  await knex.schema.createTable('password_resets', singleUseTokens('user_id', 'users.id'));
  await knex.schema.createTable('sign_in_failures', (t) => {
    t.bigIncrements('id');
    t.text('subject').notNullable().comment('`email:<sha256>` or `ip:<address>`');
    t.timestamp('at', { precision: 3 }).notNullable();
    t.index(['subject', 'at']);
  });
  await knex.schema.alterTable('accounts', (t) => {
    t.boolean('require_two_factor').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('api_keys', (t) => {
    t.text('role').nullable().comment('management keys: viewer, editor or admin');
  });
  // A management key without a role (every key made before roles, and every insert that names none) is an admin key.
  await knex.raw(
    `ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IS NULL OR (type = 'management' AND role IN ('viewer', 'editor', 'admin')))`,
  );
  await knex.schema.alterTable('console_sessions', (t) => {
    t.text('key_id').nullable().alter();
    t.text('member_id').nullable().references('members.id').onDelete('CASCADE');
    t.boolean('two_factor_pending').notNullable().defaultTo(false);
    t.text('ip').nullable();
    t.text('user_agent').nullable();
    t.index(['member_id']);
  });
  await knex.raw(
    `ALTER TABLE console_sessions ADD CONSTRAINT console_sessions_owner_check CHECK ((key_id IS NULL) <> (member_id IS NULL))`,
  );
  await createAuditLog(knex);
}

async function createAuditLog(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_log', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable();
    t.timestamp('at', { precision: 3 }).notNullable();
    t.text('actor_type').notNullable();
    t.text('actor_id').nullable();
    t.text('actor_label').nullable();
    t.text('action').notNullable();
    t.text('target_type').nullable();
    t.text('target_id').nullable();
    t.text('ip').nullable();
    t.text('user_agent').nullable();
    // not a payload: what an audited action changed (setting names, counts), never a submission's fields
    t.jsonb('details').notNullable().defaultTo('{}');
    t.index(['account_id', 'id']);
    t.index(['at']);
  });
  await knex.raw(`
    CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' AND coalesce(current_setting('intake.audit_purge', true), '') = 'on' THEN
        RETURN OLD;
      END IF;
      RAISE EXCEPTION 'audit_log is append-only' USING ERRCODE = 'insufficient_privilege';
    END $$`);
  await knex.raw(
    `CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS audit_log');
  await knex.raw('DROP FUNCTION IF EXISTS audit_log_append_only()');
  await knex('console_sessions').whereNull('key_id').delete();
  await knex.raw('ALTER TABLE console_sessions DROP CONSTRAINT IF EXISTS console_sessions_owner_check');
  await knex.schema.alterTable('console_sessions', (t) => {
    t.dropColumn('member_id');
    t.dropColumn('two_factor_pending');
    t.dropColumn('ip');
    t.dropColumn('user_agent');
  });
  await knex.raw('ALTER TABLE console_sessions ALTER COLUMN key_id SET NOT NULL');
  await knex.raw('ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_role_check');
  await knex.schema.alterTable('api_keys', (t) => t.dropColumn('role'));
  await knex.schema.alterTable('accounts', (t) => t.dropColumn('require_two_factor'));
  for (const table of ['sign_in_failures', 'password_resets', 'member_invitations', 'members', 'users'])
    await knex.schema.dropTableIfExists(table);
}

import type { Knex } from 'knex';

/**
 * The whole data model. Ids are prefixed ULIDs (text); timestamps are timestamptz with millisecond precision.
 * Submitted fields keep the order they were posted in: the payload columns that reach owners (the stored
 * submission, the event that carries it, the webhook envelope data) are json, which keeps the text as
 * written (jsonb would sort the keys). A submission's account_id has no foreign key and no index of its own:
 * it repeats its form's (deleting an account deletes its forms, whose submissions go with them), and no query
 * reads submissions by account and time.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('plans', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.integer('monthly_quota').notNullable();
    t.bigInteger('max_file_bytes').notNullable().comment('0 = the plan includes no uploads');
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
  await knex('plans').insert([
    { id: 'free', name: 'Free', monthly_quota: 100, max_file_bytes: 0 },
    { id: 'pro', name: 'Pro', monthly_quota: 10_000, max_file_bytes: 25 * 1024 * 1024 },
    { id: 'team', name: 'Team', monthly_quota: 100_000, max_file_bytes: 50 * 1024 * 1024 },
  ]);

  await knex.schema.createTable('accounts', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.text('plan_id').notNullable().references('plans.id');
    t.integer('quota_override').nullable().comment('replaces the plan monthly quota when set');
    t.text('contact_email').nullable();
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('type').notNullable();
    t.text('name').nullable();
    t.text('prefix').notNullable().comment('first characters of the key, shown to identify it');
    t.text('key_hash').notNullable().unique().comment('sha256 of the full key; the key itself is never stored');
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { precision: 3 }).nullable();
    t.timestamp('revoked_at', { precision: 3 }).nullable();
    t.index(['account_id', 'created_at']);
  });
  await knex.raw(
    `ALTER TABLE api_keys ADD CONSTRAINT api_keys_type_check CHECK (type IN ('submission', 'management'))`,
  );

  await knex.schema.createTable('forms', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('slug').notNullable().unique();
    t.text('status').notNullable().defaultTo('live');
    t.text('honeypot_field').notNullable().defaultTo('_gotcha');
    t.text('bot_challenge_provider').nullable();
    t.text('bot_challenge_secret').nullable().comment('encrypted with SECRETS_KEY');
    t.jsonb('notify_emails').notNullable().defaultTo('[]');
    t.text('redirect_url').nullable();
    t.jsonb('allowed_origins').notNullable().defaultTo('[]');
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['account_id', 'created_at']);
  });
  await knex.raw(`ALTER TABLE forms ADD CONSTRAINT forms_status_check CHECK (status IN ('live', 'paused', 'draft'))`);
  await knex.raw(
    `ALTER TABLE forms ADD CONSTRAINT forms_provider_check CHECK (bot_challenge_provider IN ('turnstile', 'hcaptcha', 'recaptcha'))`,
  );

  await knex.schema.createTable('submissions', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable();
    t.text('form_id').notNullable().references('forms.id').onDelete('CASCADE');
    t.text('status').notNullable();
    t.json('payload').notNullable();
    t.integer('file_count').notNullable().defaultTo(0);
    t.bigInteger('file_bytes').notNullable().defaultTo(0);
    t.text('ip').nullable();
    t.text('user_agent').nullable();
    t.text('referrer').nullable();
    t.text('spam_reason').nullable();
    t.timestamp('received_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['form_id', 'received_at', 'id']);
  });
  await knex.raw(
    `ALTER TABLE submissions ADD CONSTRAINT submissions_status_check CHECK (status IN ('received', 'spam'))`,
  );

  await knex.schema.createTable('submission_files', (t) => {
    t.text('id').primary();
    t.text('submission_id').notNullable().references('submissions.id').onDelete('CASCADE');
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('field').notNullable();
    t.text('filename').notNullable();
    t.text('content_type').notNullable();
    t.bigInteger('size').notNullable();
    t.text('storage_key').notNullable();
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['submission_id']);
  });
  // GET /v1/usage sums the account's stored file bytes.
  await knex.raw('CREATE INDEX submission_files_account_idx ON submission_files (account_id)');

  await knex.schema.createTable('idempotency_keys', (t) => {
    t.text('form_id').notNullable().references('forms.id').onDelete('CASCADE');
    t.text('key').notNullable();
    t.text('submission_id').notNullable();
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { precision: 3 }).notNullable();
    t.primary(['form_id', 'key']);
    t.index(['expires_at']);
  });

  await knex.schema.createTable('outbox', (t) => {
    t.bigIncrements('seq').primary();
    t.text('event_id').notNullable().unique();
    t.text('subject').notNullable().comment('subject without the NATS prefix, e.g. submission.created');
    t.json('payload').notNullable();
    t.jsonb('headers').notNullable().defaultTo('{}').comment('trace context and other NATS headers');
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('webhooks', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('form_id').notNullable().references('forms.id').onDelete('CASCADE');
    t.text('url').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.text('secret').notNullable().comment('encrypted with SECRETS_KEY');
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['form_id']);
  });

  await knex.schema.createTable('deliveries', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('webhook_id').notNullable().references('webhooks.id').onDelete('CASCADE');
    t.text('form_id').notNullable();
    t.text('submission_id').nullable();
    t.text('event_type').notNullable();
    t.json('data').notNullable().comment('the envelope data, fixed at creation');
    t.text('status').notNullable().defaultTo('pending');
    t.integer('attempt_count').notNullable().defaultTo(0);
    t.text('last_error').nullable();
    t.integer('last_status_code').nullable();
    t.timestamp('next_attempt_at', { precision: 3 }).nullable();
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.index(['webhook_id', 'created_at']);
  });
  await knex.raw(
    `CREATE UNIQUE INDEX deliveries_submission_webhook_uniq ON deliveries (webhook_id, submission_id)
     WHERE event_type = 'submission.created'`,
  );

  await knex.schema.createTable('delivery_attempts', (t) => {
    t.bigIncrements('id').primary();
    t.text('delivery_id').notNullable().references('deliveries.id').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    t.text('trigger').notNullable().defaultTo('schedule').comment('schedule | replay | test');
    t.timestamp('started_at', { precision: 3 }).notNullable();
    t.integer('duration_ms').notNullable();
    t.integer('status_code').nullable();
    t.text('error').nullable();
    t.text('response_body').nullable().comment('first KiB of the answer');
    t.index(['delivery_id', 'attempt']);
  });

  await knex.schema.createTable('notifications', (t) => {
    t.text('id').primary();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('kind').notNullable().comment('submission | quota-80 | quota-100');
    t.text('dedup_key').notNullable().unique();
    t.jsonb('recipients').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.integer('attempt_count').notNullable().defaultTo(0);
    t.text('last_error').nullable();
    t.timestamp('created_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('sent_at', { precision: 3 }).nullable();
  });
  // The quota-warning sender looks for pending rows.
  await knex.raw(`CREATE INDEX notifications_pending_idx ON notifications (created_at) WHERE status = 'pending'`);

  await knex.schema.createTable('usage_counters', (t) => {
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.date('period').notNullable().comment('first day of the UTC month');
    t.integer('used')
      .notNullable()
      .defaultTo(0)
      .comment('received submissions: the number ingest enforces the quota on');
    t.integer('spam').notNullable().defaultTo(0);
    t.bigInteger('file_bytes').notNullable().defaultTo(0);
    t.primary(['account_id', 'period']);
  });

  await knex.schema.createTable('usage_daily', (t) => {
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.text('form_id').notNullable();
    t.date('day').notNullable();
    t.integer('received').notNullable().defaultTo(0);
    t.integer('spam').notNullable().defaultTo(0);
    t.bigInteger('file_bytes').notNullable().defaultTo(0);
    t.primary(['account_id', 'form_id', 'day']);
  });

  await knex.schema.createTable('processed_events', (t) => {
    t.text('consumer').notNullable();
    t.text('event_id').notNullable();
    t.timestamp('processed_at', { precision: 3 }).notNullable().defaultTo(knex.fn.now());
    t.primary(['consumer', 'event_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'processed_events',
    'usage_daily',
    'usage_counters',
    'notifications',
    'delivery_attempts',
    'deliveries',
    'webhooks',
    'outbox',
    'idempotency_keys',
    'submission_files',
    'submissions',
    'forms',
    'api_keys',
    'accounts',
    'plans',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}

import { existsSync } from 'node:fs';
import path from 'node:path';
import { createTestPlatform, factories, freePort, type TestPlatform } from '@intake/shared/testing';
import { purgeDue } from '../src/lifecycle/purge';
import { startS3 } from '../../ingest/test/files';

const DAY = 24 * 60 * 60 * 1000;
const ago = (days: number) => new Date(Date.now() - days * DAY);

/** An account whose form keeps submissions `retention` days (spam its default 30), and a way to store posts to it. */
async function formKeeping(platform: TestPlatform, retention: number | null) {
  const account = await factories.account(platform.db);
  const form = await factories.form(platform.db, account.id, { notify_emails: ['owner@example.test'] });
  await platform.db('forms').where({ id: form.id }).update({ retention_days: retention });
  const hook = await factories.webhook(platform, { accountId: account.id, formId: form.id });
  const submit = async (receivedAt: Date, status: 'received' | 'spam' = 'received') => {
    const stored = await factories.submission(platform, {
      accountId: account.id,
      formId: form.id,
      status,
      receivedAt,
      idempotencyKey: `key-${receivedAt.getTime()}-${status}`,
      files: [{ content: 'the file', filename: 'cv.pdf' }],
    });
    const delivery = await factories.delivery(platform.db, {
      accountId: account.id,
      webhookId: hook.id,
      formId: form.id,
      submissionId: stored.id,
      status: 'failed',
    });
    await platform.db('delivery_attempts').insert({
      delivery_id: delivery.id,
      attempt: 1,
      started_at: receivedAt,
      duration_ms: 5,
      status_code: 500,
      response_body: 'the receiver said so',
    });
    await platform.db('notifications').insert({
      id: `ntf_${stored.id}`,
      account_id: account.id,
      kind: 'submission',
      dedup_key: `submission:${stored.id}`,
      recipients: JSON.stringify(['owner@example.test']),
      status: 'sent',
    });
    // The owner marked it: the spam filter keeps a copy of its fields.
    await platform.db('spam_examples').insert({
      submission_id: stored.id,
      account_id: account.id,
      is_spam: status === 'spam',
      payload: JSON.stringify({ name: 'Ada' }),
    });
    return { ...stored, key: stored.files[0]!.storage_key, deliveryId: delivery.id };
  };
  return { account, form, submit };
}

/** What is left of a submission: its row, file rows, deliveries, attempts, notification and idempotency key. */
async function leftOf(platform: TestPlatform, s: { id: string; deliveryId: string }) {
  const { db } = platform;
  const count = async (q: PromiseLike<unknown[]>) => (await q).length;
  return {
    submission: await count(db('submissions').where({ id: s.id })),
    files: await count(db('submission_files').where({ submission_id: s.id })),
    deliveries: await count(db('deliveries').where({ id: s.deliveryId })),
    attempts: await count(db('delivery_attempts').where({ delivery_id: s.deliveryId })),
    notifications: await count(db('notifications').where({ dedup_key: `submission:${s.id}` })),
    idempotencyKeys: await count(db('idempotency_keys').where({ submission_id: s.id })),
    spamExamples: await count(db('spam_examples').where({ submission_id: s.id })),
  };
}
const ALL = {
  submission: 1,
  files: 1,
  deliveries: 1,
  attempts: 1,
  notifications: 1,
  idempotencyKeys: 1,
  spamExamples: 1,
};
const NONE = {
  submission: 0,
  files: 0,
  deliveries: 0,
  attempts: 0,
  notifications: 0,
  idempotencyKeys: 0,
  spamExamples: 0,
};

/** The retention cases, for a platform whose files go where `stored(key)` looks. */
function retentionCases(ctx: { platform: TestPlatform; stored(key: string): Promise<boolean> }) {
  it('deletes a submission older than retention_days with everything of it, its file first; newer ones stay', async () => {
    const { platform } = ctx;
    const { account, submit } = await formKeeping(platform, 30);
    const old = await submit(ago(31));
    const recent = await submit(ago(29));
    const usageBefore = await platform.db('usage_counters').where({ account_id: account.id }).orderBy('period');
    expect(await ctx.stored(old.key)).toBe(true);

    const counts = await purgeDue(platform);

    expect(counts.retention).toBeGreaterThanOrEqual(1);
    expect(await leftOf(platform, old)).toEqual(NONE);
    expect(await ctx.stored(old.key)).toBe(false);
    expect(await leftOf(platform, recent)).toEqual(ALL);
    expect(await ctx.stored(recent.key)).toBe(true);
    // Usage already counted stays as it was.
    expect(await platform.db('usage_counters').where({ account_id: account.id }).orderBy('period')).toEqual(
      usageBefore,
    );
    // The run is in the account's audit log: by the system, with what it removed.
    const audited = await platform.db('audit_log').where({ account_id: account.id, action: 'submissions.purged' });
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({
      actor_type: 'system',
      details: { retention: 1, spam: 0, delivered: 0, left: 0 },
    });
  });

  it('deletes spam older than spam_retention_days (30 by default) and keeps received submissions as old', async () => {
    const { platform } = ctx;
    const { submit } = await formKeeping(platform, null);
    const spam = await submit(ago(31), 'spam');
    const received = await submit(ago(400));
    await purgeDue(platform);
    expect((await leftOf(platform, spam)).submission).toBe(0);
    expect(await ctx.stored(spam.key)).toBe(false);
    expect(await leftOf(platform, received)).toEqual(ALL);
  });
}

describe('retention with files in a local directory', () => {
  const ctx = { platform: undefined as unknown as TestPlatform, stored: async (_key: string) => false };
  beforeAll(async () => {
    ctx.platform = await createTestPlatform();
    ctx.stored = async (key) => existsSync(path.join(ctx.platform.config.FILES_DIR, key));
  });
  afterAll(async () => ctx.platform.close());
  retentionCases(ctx);
});

describe('retention with files in an S3-compatible store (s3rver)', () => {
  const ctx = { platform: undefined as unknown as TestPlatform, stored: async (_key: string) => false };
  let s3: Awaited<ReturnType<typeof startS3>>;
  beforeAll(async () => {
    s3 = await startS3();
    ctx.platform = await createTestPlatform(s3.config);
    ctx.stored = async (key) => (await s3.listKeys(key)).includes(key);
  });
  afterAll(async () => {
    await ctx.platform.close();
    await s3.close();
  });
  retentionCases(ctx);

  it('leaves the rows for the next run when the store refuses, and finishes when it is back', async () => {
    const { platform } = ctx;
    const { submit } = await formKeeping(platform, 1);
    const old = await submit(ago(2));
    // The same database with the store unreachable: its S3 client's deletes fail.
    const refusing = await createTestPlatform({ ...s3.config, S3_ENDPOINT: `http://127.0.0.1:${await freePort()}` });
    const counts = await purgeDue(refusing).finally(() => refusing.close());
    expect(counts.left).toBeGreaterThanOrEqual(1);
    expect(await leftOf(platform, old)).toEqual(ALL);
    expect(await ctx.stored(old.key)).toBe(true);

    await purgeDue(platform);
    expect(await leftOf(platform, old)).toEqual(NONE);
    expect(await ctx.stored(old.key)).toBe(false);
  });
});

import { newId } from '../contracts/ids';
import { createTestPlatform, emptyTestDatabaseUrl, factories, useMetrics, type TestPlatform } from '../testing';
import { recordAttempt, type AttemptOutcome } from '../telemetry/signals';
import { observeFailingWebhooks } from './database-gauges';

const HOUR = 60 * 60 * 1000;
const OUTCOMES: AttemptOutcome[] = ['success', 'http_error', 'timeout', 'network_error', 'blocked'];

/**
 * Many webhooks: the attempts counter stays a handful of series whatever their number (the SDK's limit of 2,000
 * attribute sets per metric is never met, so no attempt folds into its overflow series), and the webhooks failing for
 * WEBHOOK_FAILURE_ALERT_AFTER are one gauge that counts every one of them.
 */
describe('webhook metrics with many webhooks', () => {
  const collect = useMetrics();
  let platform: TestPlatform;
  beforeAll(async () => {
    // A database of its own: the gauge counts every failing webhook, and other files leave theirs in the worker's.
    platform = await createTestPlatform({ DATABASE_URL: await emptyTestDatabaseUrl('gauges') });
  });
  afterAll(() => platform.close());

  it('counts every attempt at 2,500 webhooks in at most one series per outcome, none in overflow', async () => {
    for (let i = 0; i < 2500; i++)
      recordAttempt({
        outcome: OUTCOMES[i % OUTCOMES.length]!,
        seconds: 0.01,
        willRetry: false,
        webhookId: `wh_${i}`,
      });
    const attempts = await collect('intake.delivery.attempts');
    const points = attempts?.dataPoints ?? [];
    expect(points.length).toBeLessThanOrEqual(OUTCOMES.length);
    expect(points.filter((p) => 'otel.metric.overflow' in p.attributes)).toEqual([]);
    expect(points.reduce((n, p) => n + (p.value as number), 0)).toBe(2500);
    for (const outcome of OUTCOMES)
      expect(points.find((p) => p.attributes['outcome'] === outcome)?.value).toBe(2500 / OUTCOMES.length);
  });

  it('counts in one gauge every enabled webhook failing for WEBHOOK_FAILURE_ALERT_AFTER, of 2,500', async () => {
    const account = await factories.account(platform.db);
    const form = await factories.form(platform.db, account.id);
    const model = await factories.webhook(platform, { accountId: account.id, formId: form.id });
    const row = await platform.db('webhooks').where({ id: model.id }).first();
    const now = new Date();
    // 2,100 failing for two hours, 300 for ten minutes (not yet), 99 disabled for failing, and the model healthy.
    const copies = Array.from({ length: 2499 }, (_, i) => ({
      ...row,
      id: newId('webhook'),
      url: `https://hooks.example.com/${i}`,
      enabled: i >= 2400 ? false : true,
      failing_since: new Date(now.getTime() - (i < 2100 || i >= 2400 ? 2 * HOUR : HOUR / 6)),
      consecutive_failures: 5,
    }));
    for (let i = 0; i < copies.length; i += 500) await platform.db('webhooks').insert(copies.slice(i, i + 500));
    const observing = observeFailingWebhooks({
      db: platform.db,
      clock: { now: () => now },
      config: { WEBHOOK_FAILURE_ALERT_AFTER: HOUR },
    });
    try {
      const failing = await collect('intake.webhooks.failing');
      expect(failing?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([[{}, 2100]]);
    } finally {
      await observing.stop();
    }
  });
});

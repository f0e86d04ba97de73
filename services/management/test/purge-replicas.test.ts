import { metrics } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { OnRequestMetricReader } from '@intake/shared/telemetry';
import { createTestPlatform, emptyTestDatabaseUrl, factories, type TestPlatform } from '@intake/shared/testing';
import { observePurgeLag, purgeDue, type PurgeCounts } from '../src/lifecycle/purge';
import { purgeLagSeconds } from '../src/lifecycle/purge.repository';

const DAY = 24 * 60 * 60 * 1000;

/** A form keeping submissions `retention` days, with `count` of them received `daysAgo` days ago (copied in SQL). */
async function formWith(platform: TestPlatform, props: { retention: number; count: number; daysAgo: number }) {
  const account = await factories.account(platform.db);
  const form = await factories.form(platform.db, account.id);
  await platform.db('forms').where({ id: form.id }).update({ retention_days: props.retention });
  const model = await factories.submission(platform, {
    accountId: account.id,
    formId: form.id,
    receivedAt: new Date(Date.now() - props.daysAgo * DAY),
  });
  await platform.db.raw(
    `INSERT INTO submissions
     SELECT (jsonb_populate_record(NULL::submissions, to_jsonb(s) || jsonb_build_object('id', s.id || '_' || g))).*
     FROM submissions s, generate_series(2, ?) g WHERE s.id = ?`,
    [props.count, model.id],
  );
  return form.id;
}

/** Two management replicas (two pools on one database) purging at once. */
describe('the purge on two replicas at once', () => {
  let a: TestPlatform;
  let b: TestPlatform;
  beforeAll(async () => {
    // A database of their own: a purge removes whatever is due, and other files leave theirs in the worker's.
    const DATABASE_URL = await emptyTestDatabaseUrl('purgereplicas');
    a = await createTestPlatform({ DATABASE_URL });
    b = await createTestPlatform({ DATABASE_URL });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('removes each due submission once: the replicas split the forms, no batch selects rows the other removes', async () => {
    const forms: string[] = [];
    for (let i = 0; i < 6; i++) forms.push(await formWith(a, { retention: 30, count: 250, daysAgo: 40 }));
    const kept = await formWith(a, { retention: 30, count: 5, daysAgo: 10 });
    const pace = { batchSize: 100, duty: 1 };
    const [first, second] = await Promise.all([purgeDue({ ...a, ...pace }), purgeDue({ ...b, ...pace })]);
    console.log(`two replicas: ${JSON.stringify({ first, second })}`);

    const total = (c: PurgeCounts) => c.retention;
    expect(total(first) + total(second)).toBe(1500);
    // Rows selected for removal that the other replica removed first: double work.
    expect(first.raced + second.raced).toBe(0);
    const left = async (ids: string[]) =>
      Number((await a.db('submissions').whereIn('form_id', ids).count('* as n'))[0]?.n);
    expect(await left(forms)).toBe(0);
    expect(await left([kept])).toBe(5);
    // Which replica takes which form is the machine's timing (one that starts late may find nothing left): what holds
    // is the sum, and no double work.
  });

  it('reads the purge lag: how long the oldest due submission has been due, 0 once purged', async () => {
    await purgeDue({ ...a, duty: 1 });
    const now = new Date();
    expect(await purgeLagSeconds(a.db, { now, trashDays: 30 })).toBe(0);
    await formWith(a, { retention: 30, count: 3, daysAgo: 32 });
    const reader = new OnRequestMetricReader();
    const provider = new MeterProvider({ readers: [reader] });
    metrics.setGlobalMeterProvider(provider);
    const observing = observePurgeLag({ db: a.db, clock: { now: () => now }, trashDays: 30, cacheMs: 0 });
    const gauge = async () =>
      (await reader.collect()).resourceMetrics.scopeMetrics
        .flatMap((s) => s.metrics)
        .find((m) => m.descriptor.name === 'intake.purge.lag')?.dataPoints[0]?.value as number;
    try {
      // Received 32 days ago, kept 30: due for two days (the seconds since `now` was taken aside).
      expect(Math.abs((await gauge()) - 2 * 86_400)).toBeLessThan(60);
      await purgeDue({ ...a, duty: 1 });
      expect(await gauge()).toBe(0);
    } finally {
      await observing.stop();
      metrics.disable();
      await provider.shutdown();
    }
  });
});

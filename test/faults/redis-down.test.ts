import { eventually, factories, startRedisServer } from '@intake/shared/testing';
import { faultSuite, faultSuiteWithServer, pool, post, processEnv, startService, tally } from './harness';

const POINTS = 30;

/** Our own Redis is stopped under an ingest process: posts keep being accepted (and limited, in process) and Redis takes over again. */
describe('fault: Redis down', () => {
  const suite = faultSuiteWithServer(startRedisServer, (url) => ({ REDIS_URL: url }));
  const { processes } = suite;

  it('keeps accepting posts with the in-process rate limiter, and counts in Redis again once it is back', async () => {
    const { platform } = suite;
    const account = await factories.account(platform.db, { plan: 'team', quota: 100_000 });
    const form = await factories.form(platform.db, account.id);
    const ingest = await startService(
      'ingest',
      processEnv(platform.config, { RATE_LIMIT_POINTS: String(POINTS), TRUST_PROXY: 'true' }),
      { ready: true },
    );
    processes.push(ingest);
    const from = (ip: string) => () => post(ingest.url, form.slug, undefined, { 'x-forwarded-for': ip });
    const keys = () => platform.redis!.keys(`${platform.config.NATS_PREFIX}:ingest-rl*`);

    const up = await pool(10, 2, from('203.0.113.1'));
    expect(tally(up.map((a) => a.status))).toEqual({ 201: 10 });
    expect(await keys()).toHaveLength(1);

    await suite.server.stop();
    const started = Date.now();
    const whileDown = await pool(POINTS + 5, 1, from('203.0.113.2'));
    const downMs = Date.now() - started;
    // Still ready: a Redis blip must not take ingest out of its Service.
    const readyWhileDown = await fetch(`${ingest.url}/readyz`);

    await suite.server.start();
    let probes = 0;
    await eventually(
      async () =>
        (await post(ingest.url, form.slug, undefined, { 'x-forwarded-for': '203.0.113.3' })).status === 201 &&
        ++probes > 0 &&
        (await keys()).length > 0,
      { timeoutMs: 20_000, message: 'ingest counting in Redis again' },
    );
    const after = await pool(10, 2, from('203.0.113.4'));
    const stored = await platform.db('submissions').where({ form_id: form.id }).count({ n: '*' }).first();
    console.log(
      `redis-down: up ${JSON.stringify(tally(up.map((a) => a.status)))}, while down ` +
        `${JSON.stringify(tally(whileDown.map((a) => a.status)))} in ${downMs} ms, after ` +
        `${JSON.stringify(tally(after.map((a) => a.status)))}; ${stored?.n} submissions stored, ` +
        `${(await keys()).length} limiter keys in Redis, ${probes} posts until Redis counted again`,
    );

    // While Redis is down the in-process limiter takes over with the same budget: accepted up to it, then 429.
    expect(tally(whileDown.map((a) => a.status))).toEqual({ 201: POINTS, 429: 5 });
    expect(readyWhileDown.status).toBe(200);
    expect(tally(after.map((a) => a.status))).toEqual({ 201: 10 });
    expect(Number(stored?.n)).toBe(10 + POINTS + probes + 10);
  });
});

/** Without REDIS_URL there is no Redis: each ingest process counts alone, ready at once. */
describe('no Redis at all (REDIS_URL empty)', () => {
  const suite = faultSuite();

  it('is ready, accepts and limits posts in process, and health says Redis is unused', async () => {
    const { platform, processes } = suite;
    const account = await factories.account(platform.db, { plan: 'team', quota: 100_000 });
    const form = await factories.form(platform.db, account.id);
    const env = processEnv(platform.config, { REDIS_URL: '', RATE_LIMIT_POINTS: String(POINTS), TRUST_PROXY: 'true' });
    const ingest = await startService('ingest', env, { ready: true });
    const management = await startService('management', env, { ready: true });
    processes.push(ingest, management);
    const answers = await pool(POINTS + 5, 1, () =>
      post(ingest.url, form.slug, undefined, { 'x-forwarded-for': '203.0.113.9' }),
    );
    const health = (await (await fetch(`${management.url}/v1/health`)).json()) as { checks: { redis: string } };
    console.log(
      `no-redis: ${JSON.stringify(tally(answers.map((a) => a.status)))}, health redis ${health.checks.redis}`,
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 201: POINTS, 429: 5 });
    expect(health.checks.redis).toBe('unused');
  });
});

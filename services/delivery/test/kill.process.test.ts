import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { createTestPlatform, eventually, startupBudgetMs, type TestPlatform, factories } from '@intake/shared/testing';
import { startPlatformRelay, type Worker } from '@intake/shared/runtime';
import { accountWithForm, receiver, submit } from './helpers';

const MAIN = path.resolve(__dirname, '../dist/main.js');

/** The standalone delivery process (`node services/delivery/dist/main.js`, built by `npx tsc -b`) on the test's database and streams. */
function startProcess(platform: TestPlatform): ChildProcess {
  const { config } = platform;
  return spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      PORT: '0',
      DATABASE_URL: config.DATABASE_URL,
      NATS_PREFIX: config.NATS_PREFIX,
      NATS_URL: config.NATS_URL,
      REDIS_URL: config.REDIS_URL,
      SECRETS_KEY: config.SECRETS_KEY,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_TIMEOUT_MS: '1500',
      WEBHOOK_RETRY_SCHEDULE: '10s',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

describe('a delivery process killed mid-attempt', () => {
  let platform: TestPlatform;
  let relay: Worker;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npx tsc -b first`);
    platform = await createTestPlatform();
    relay = startPlatformRelay(platform, { pollMs: 200 });
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await relay.stop();
    await platform.close();
  });

  it('loses nothing: after SIGKILL and a restart the attempt is made again, as attempt 1', async () => {
    let killed = false;
    const target = await receiver((_req, n, res) => {
      if (n === 1) return; // the first attempt hangs until the process is killed
      res.end('ok');
    });
    try {
      const { accountId, formId } = await accountWithForm(platform);
      await factories.webhook(platform, { accountId, formId, url: target.url });
      const first = startProcess(platform);
      children.push(first);
      const event = await submit(platform, { accountId, formId });
      await eventually(() => target.requests.length === 1, { timeoutMs: startupBudgetMs(), message: 'first attempt' });
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));
      killed = true;
      expect(
        await platform
          .db('delivery_attempts')
          .join('deliveries', 'deliveries.id', 'delivery_attempts.delivery_id')
          .where({ submission_id: event.submission_id }),
      ).toEqual([]);

      children.push(startProcess(platform));
      const delivery = await eventually(
        () => platform.db('deliveries').where({ submission_id: event.submission_id, status: 'succeeded' }).first(),
        { timeoutMs: startupBudgetMs(), message: 'redelivered attempt' },
      );
      expect(killed).toBe(true);
      expect(target.requests).toHaveLength(2);
      expect(target.requests.map((r) => r.headers['x-service-attempt'])).toEqual(['1', '1']);
      expect(target.requests.map((r) => JSON.parse(r.body).id)).toEqual([delivery.id, delivery.id]);
      expect(delivery.attempt_count).toBe(1);
      console.log(`attempt made again ${target.requests[1]!.at - target.requests[0]!.at} ms after the killed one`);
    } finally {
      await target.close();
    }
  });
});

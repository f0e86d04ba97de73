import {
  createTestPlatform,
  eventually,
  startNatsServer,
  type OwnServer,
  type TestPlatform,
} from '@intake/shared/testing';
import {
  formWithWebhook,
  processEnv,
  receiver,
  startService,
  steadyPoster,
  stopAll,
  tally,
  type ServiceProcess,
} from './harness';

/** Our own nats-server is killed and started again while posts keep coming: every 201 still gets its webhook. */
describe('fault: NATS stopped and restarted under a steady stream of posts', () => {
  let nats: OwnServer;
  let platform: TestPlatform;
  const processes: ServiceProcess[] = [];
  let down = false;
  beforeAll(async () => {
    nats = await startNatsServer();
    platform = await createTestPlatform({ NATS_URL: nats.url });
  });
  afterAll(async () => {
    await stopAll(processes);
    if (down) await nats.start();
    await platform.close();
    await nats.destroy();
  });

  it('delivers a webhook for every accepted post', async () => {
    const target = await receiver();
    try {
      const { slug } = await formWithWebhook(platform, target.url);
      const env = processEnv(platform.config);
      const ingest = await startService('ingest', env, { ready: true });
      processes.push(ingest, await startService('delivery', env, { ready: true }));

      const poster = steadyPoster(ingest.url, slug, 2);
      await eventually(() => poster.accepted() >= 40 && target.envelopes.length > 0, {
        timeoutMs: 20_000,
        message: 'posts and webhooks flowing',
      });
      await nats.stop();
      down = true;
      const atStop = poster.accepted();
      await eventually(() => poster.accepted() >= atStop + 60, {
        timeoutMs: 20_000,
        message: 'posts accepted while NATS is down',
      });
      const receivedWhileDown = target.envelopes.length;
      await nats.start();
      down = false;
      const atStart = poster.accepted();
      await eventually(() => poster.accepted() >= atStart + 40, {
        timeoutMs: 20_000,
        message: 'posts after NATS is back',
      });
      const answers = await poster.stop();

      const accepted = new Set(answers.filter((a) => a.status === 201).map((a) => a.id));
      await eventually(() => [...accepted].every((id) => target.submissionIds().has(id as string)), {
        timeoutMs: 40_000,
        message: `a webhook for each of ${accepted.size} accepted posts (have ${target.submissionIds().size})`,
      });
      console.log(
        `nats-restart: ${answers.length} posts ` +
          `${JSON.stringify(tally(answers.map((a) => a.status)))}, ${atStart - atStop} accepted while ` +
          `NATS was down, ${target.envelopes.length} webhooks received (${receivedWhileDown} before ` +
          `restart), ${target.submissionIds().size} distinct submissions, ` +
          `${target.envelopes.length - target.distinctIds().size} duplicates`,
      );
      expect(tally(answers.map((a) => a.status))).toEqual({ 201: answers.length });
      expect(target.submissionIds()).toEqual(accepted);
    } finally {
      await target.close();
    }
  }, 90_000);
});

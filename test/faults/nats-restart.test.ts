import { eventually, startNatsServer } from '@intake/shared/testing';
import { faultSuiteWithServer, formWithReceiver, startService, steadyPoster, tally } from './harness';

/** Our own nats-server is killed and started again while posts keep coming: every 201 still gets its webhook. */
describe('fault: NATS stopped and restarted under a steady stream of posts', () => {
  const suite = faultSuiteWithServer(startNatsServer, (url) => ({ NATS_URL: url }));
  const { processes } = suite;

  it('delivers a webhook for every accepted post', async () => {
    const { platform } = suite;
    const { target, slug, env } = await formWithReceiver(platform);
    try {
      const ingest = await startService('ingest', env, { ready: true });
      processes.push(ingest, await startService('delivery', env, { ready: true }));

      const poster = steadyPoster(ingest.url, slug, 2);
      /** Waits until `n` more posts are accepted; returns how many were accepted when it began. */
      const acceptMore = async (n: number, message: string) => {
        const at = poster.accepted();
        await eventually(() => poster.accepted() >= at + n, { timeoutMs: 20_000, message });
        return at;
      };
      await eventually(() => poster.accepted() >= 40 && target.envelopes.length > 0, {
        timeoutMs: 20_000,
        message: 'posts and webhooks flowing',
      });
      await suite.server.stop();
      const atStop = await acceptMore(60, 'posts accepted while NATS is down');
      const receivedWhileDown = target.envelopes.length;
      await suite.server.start();
      const atStart = await acceptMore(40, 'posts after NATS is back');
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
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import { createWebhookAgent, sendWebhook } from '../src/send/attempt';

/** A receiver in another process, so it answers while this process's event loop is blocked. */
async function receiverProcess(delayMs: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [
    '-e',
    `require('node:http').createServer((q, r) => { q.resume(); q.on('end', () => setTimeout(() => r.end('ok'), ${delayMs})); })
       .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
  ]);
  const port = await new Promise<string>((resolve) =>
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())),
  );
  return { url: `http://127.0.0.1:${port}/hook`, child };
}

/** Busy for `ms`: what a process starved of CPU looks like to its own timers (not a sleep: nothing else runs). */
function blockEventLoop(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

/**
 * An answer that arrived in time is not timed out because this process ran its timers
 * late (a timed-out attempt is retried, so that would be a duplicate with no crash).
 */
describe('webhook sender: the timeout and a late event loop', () => {
  const props = (url: string, timeoutMs: number, agent: ReturnType<typeof createWebhookAgent>) => ({
    agent,
    url,
    allowPrivateNetworks: true,
    timeoutMs,
    type: 'webhook.test' as const,
    deliveryId: 'whd_lag',
    data: {},
    attempt: 1,
    secret: 'whsec_dGVzdA==',
    now: new Date(),
  });

  it('keeps an answer that came in while the event loop was blocked past the timeout', async () => {
    const { url, child } = await receiverProcess(20);
    const agent = createWebhookAgent({ allowPrivateNetworks: true, timeoutMs: 300 });
    try {
      await sendWebhook(props(url, 300, agent)); // warm: the connection is open
      const attempt = sendWebhook(props(url, 300, agent));
      blockEventLoop(900);
      const result = await attempt;
      expect(result).toMatchObject({ ok: true, outcome: 'success', statusCode: 200 });
    } finally {
      await agent.close();
      child.kill();
    }
  });

  it('still times out a receiver that does not answer in time', async () => {
    // It never answers within the test: an outcome at all is the timeout's.
    const { url, child } = await receiverProcess(600_000);
    const agent = createWebhookAgent({ allowPrivateNetworks: true, timeoutMs: 300 });
    try {
      const result = await sendWebhook(props(url, 300, agent));
      expect(result).toMatchObject({ ok: false, outcome: 'timeout', error: 'no answer within 300 ms' });
    } finally {
      await agent.close();
      child.kill();
    }
  });
});

import { eventually, startNatsServer } from '@intake/shared/testing';
import {
  faultSuiteWithServer,
  formWithReceiver,
  pool,
  post,
  startService,
  tally,
  type ServiceProcess,
} from './harness';

/**
 * The services start while NATS is down (a node being rescheduled, a cluster still electing): each listens and is
 * ready on Postgres alone, ingest accepts posts into the outbox, and once NATS starts the workers start and every
 * accepted post's webhook arrives, once. Before, a process waited for NATS before listening, and the startup probe
 * restarted it in a loop.
 */
const POSTS = 20;

describe('fault: NATS absent when the services start', () => {
  const suite = faultSuiteWithServer(startNatsServer, (url) => ({ NATS_URL: url }));

  it('listens, is ready and accepts posts, and delivers each once NATS starts', async () => {
    const { platform, processes } = suite;
    const { target, slug, env } = await formWithReceiver(platform);
    try {
      await suite.server.stop();
      const started = performance.now();
      const services = await Promise.all(
        (['ingest', 'delivery', 'management'] as const).map((name) =>
          startService(name, env, { ready: true, workers: false }),
        ),
      );
      processes.push(...services);
      const [ingest, , management] = services as [ServiceProcess, ServiceProcess, ServiceProcess];
      const readyMs = performance.now() - started;
      const waiting = (await (await fetch(`${services[1]!.url}/readyz`)).json()) as { workers?: string };
      expect(waiting.workers).toBe('waiting for NATS');

      const posts = await pool(POSTS, 4, (i) => post(ingest.url, slug, { name: 'early', n: String(i) }));
      const health = await fetch(`${management.url}/v1/health`);
      const checks = ((await health.json()) as { checks: Record<string, string> }).checks;
      expect(tally(posts.map((p) => p.status))).toEqual({ 201: POSTS });
      expect([health.status, checks['nats'], checks['postgres']]).toEqual([503, 'down', 'ok']);
      expect(target.envelopes).toEqual([]);

      await suite.server.start();
      const ids = new Set(posts.map((p) => p.id));
      await eventually(() => [...ids].every((id) => target.submissionIds().has(id!)), {
        timeoutMs: 30_000,
        message: 'every webhook once NATS is up',
      });
      console.log(
        `nats-late: three services ready in ${readyMs.toFixed(0)} ms without NATS; ${POSTS} posts accepted; ` +
          `${target.envelopes.length} webhooks after NATS started, ${target.distinctIds().size} distinct`,
      );
      expect(target.envelopes).toHaveLength(POSTS);
      expect(target.submissionIds()).toEqual(ids);
    } finally {
      await target.close();
    }
  });
});

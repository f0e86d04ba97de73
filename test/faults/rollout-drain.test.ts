import http from 'node:http';
import { eventually, factories, listen } from '@intake/shared/testing';
import { faultSuite, processEnv, startService, steadyPoster, tally } from './harness';

/**
 * A rolling update as Kubernetes does it: the old ingest pod gets SIGTERM while the ingress still sends it requests
 * for a moment (endpoints are removed asynchronously; here the proxy keeps the old pod for a second). With
 * SHUTDOWN_DELAY_SECONDS the old pod keeps serving (readiness 503) until the proxy has moved on, then drains: no
 * connection is refused, no post lost. Before, the listener closed within milliseconds and the ingress's requests
 * meanwhile were refused (502 at the ingress).
 */
const DELAY_SECONDS = 2;
const ENDPOINT_LAG_MS = 1000;

/** An HTTP proxy to `target()` (as ingress-nginx to a Service's endpoints, with keep-alive); 502 when it cannot reach it. */
async function proxy(target: () => string) {
  const agent = new http.Agent({ keepAlive: true });
  let refused = 0;
  const server = await listen((req, res) => {
    const url = new URL(req.url ?? '/', target());
    const upstream = http.request(url, { method: req.method, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      refused += 1;
      if (!res.headersSent) res.writeHead(502).end();
    });
    req.pipe(upstream);
  });
  return { ...server, refused: () => refused, close: () => (agent.destroy(), server.close()) };
}

describe('fault: an ingest pod stopped in a rolling update under steady posts', () => {
  const suite = faultSuite();

  it('keeps serving through SHUTDOWN_DELAY_SECONDS, then drains: nothing refused, nothing lost', async () => {
    const { platform, processes } = suite;
    const account = await factories.account(platform.db, { plan: 'team', quota: 1_000_000 });
    const form = await factories.form(platform.db, account.id);
    const env = processEnv(platform.config, { SHUTDOWN_DELAY_SECONDS: String(DELAY_SECONDS) });
    const old = await startService('ingest', env, { ready: true });
    const next = await startService('ingest', env, { ready: true });
    processes.push(old, next);
    let endpoint = old.url;
    const ingress = await proxy(() => endpoint);
    const poster = steadyPoster(ingress.url, form.slug, 4);
    try {
      await eventually(() => poster.accepted() >= 50, { message: 'posts flowing through the proxy' });

      const stopping = old.stop('SIGTERM');
      // The old pod says it is not ready at once, and still answers.
      await eventually(async () => (await fetch(`${old.url}/readyz`)).status === 503, { intervalMs: 20 });
      await new Promise((resolve) => setTimeout(resolve, ENDPOINT_LAG_MS));
      const beforeSwitch = poster.accepted();
      endpoint = next.url;
      await stopping;
      const atExit = poster.accepted();
      await eventually(() => poster.accepted() >= atExit + 50, { message: 'posts flowing to the new pod' });
      const answers = await poster.stop();

      const accepted = answers.filter((a) => a.status === 201).map((a) => a.id);
      const stored = await platform.db('submissions').where({ form_id: form.id }).count({ n: '*' }).first();
      console.log(
        `rollout drain: ${answers.length} posts ${JSON.stringify(tally(answers.map((a) => a.status)))}, ` +
          `${beforeSwitch} accepted before the proxy moved on, ${ingress.refused()} refused by the old pod, ` +
          `${stored?.n} stored`,
      );
      expect(ingress.refused()).toBe(0);
      expect(tally(answers.map((a) => a.status))).toEqual({ 201: answers.length });
      expect(Number(stored?.n)).toBe(accepted.length);
    } finally {
      await poster.stop();
      await ingress.close();
    }
  });
});

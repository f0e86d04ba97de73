import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import pg from 'pg';
import { eventually, freePort, listen, startupBudgetMs } from '@intake/shared/testing';
import { createAccountKey, managementApi } from '../all-in-one';

/** One metric family as parse-prometheus-text-format gives it. */
interface Family {
  name: string;
  type: string;
  metrics: { labels?: Record<string, string>; value?: string; buckets?: Record<string, string> }[];
}

/**
 * `npm start` with METRICS_PORT: its one /metrics has the instruments of its background threads too (delivery's
 * counters and the post → webhook histogram are recorded on the background thread), each family once, the series
 * of several threads added up.
 */
describe('npm start’s /metrics', () => {
  const database = `intake_aio_metrics_${randomBytes(4).toString('hex')}`;
  let child: ChildProcess | undefined;

  afterAll(async () => {
    if (child?.pid && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
    const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await client.end();
  });

  it('serves the background threads’ deliveries, attempts and latency beside the main thread’s series', async () => {
    const metricsPort = await freePort();
    const started = startAllInOne(database, metricsPort);
    child = started.child;
    const url = await started.url;

    const received: string[] = [];
    const receiver = await listen((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(String(req.headers['webhook-id']));
        res.end();
      });
    });
    try {
      const api = managementApi(url, createAccountKey(`postgres://postgres@127.0.0.1:5432/${database}`));
      const form = await api('POST', '/v1/forms', { name: 'Scraped' });
      expect(form.status).toBe(201);
      expect((await api('POST', `/v1/forms/${form.body.id}/webhooks`, { url: `${receiver.url}/hook` })).status).toBe(
        201,
      );
      for (let i = 0; i < 3; i++) {
        const post = await fetch(`${url}/v1/f/${String(form.body.slug)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: `name=Ada&n=${i}`,
        });
        expect(post.status).toBe(201);
      }
      await eventually(() => received.length >= 3, { message: 'the three webhooks' });

      // The delivery is counted when its record is written, just after the receiver's answer.
      const { text, families } = await eventually(
        async () => {
          const s = await scrape(metricsPort);
          const delivered = sumOf(s.families.get('intake_deliveries_total'), { outcome: 'succeeded' }) >= 3;
          // A thread busy past the scrape's wait is left out of that scrape: the next one has it.
          return delivered && s.families.has('intake_purge_lag') && s.families.has('intake_webhooks_failing')
            ? s
            : undefined;
        },
        { message: 'three deliveries and both threads’ gauges on /metrics' },
      ).catch(async (err: unknown) => {
        console.log(
          (await scrape(metricsPort)).text
            .split('\n')
            .filter((l) => l.startsWith('# TYPE'))
            .join('\n'),
        );
        throw err;
      });
      const latency = families.get('intake_delivery_latency');
      console.log(
        `all-in-one /metrics: ${families.size} families; deliveries ` +
          `${JSON.stringify(families.get('intake_deliveries_total')?.metrics)}, latency ${JSON.stringify(latency?.metrics[0]?.buckets)}`,
      );
      // The background thread's instruments.
      expect(sumOf(families.get('intake_deliveries_total'), { outcome: 'succeeded' })).toBe(3);
      expect(sumOf(families.get('intake_delivery_attempts_total'), { outcome: 'success' })).toBe(3);
      expect(latency?.type).toBe('HISTOGRAM');
      expect(Number(latency?.metrics[0]?.buckets?.['+Inf'])).toBe(3);
      // The bookkeeping thread's (management's purge) and the background thread's gauges from Postgres.
      expect(families.get('intake_purge_lag')?.metrics.map((m) => m.value)).toEqual(['0']);
      expect(families.get('intake_webhooks_failing')?.metrics.map((m) => m.value)).toEqual(['0']);
      // The main thread's, in the same exposition.
      expect(sumOf(families.get('intake_submissions_total'), { outcome: 'received' })).toBe(3);
      expect(families.get('intake_consumer_pending')?.metrics.length).toBeGreaterThan(0);
      // Each family once (a second TYPE line is an error to Prometheus), and each series once: what several threads
      // record is added up.
      const types = text.split('\n').filter((l) => l.startsWith('# TYPE '));
      expect(types.length).toBe(new Set(types).size);
      const series = text.split('\n').filter((l) => l && !l.startsWith('#'));
      const keys = series.map((l) => l.slice(0, l.lastIndexOf(' ')));
      expect(keys.length).toBe(new Set(keys).size);
    } finally {
      await receiver.close();
    }
  });
});

/** Spawns the built all-in-one on `database` with METRICS_PORT; `url` once it listens. */
function startAllInOne(database: string, metricsPort: number) {
  let output = '';
  const child = spawn(process.execPath, [path.resolve(__dirname, '../../dist/all-in-one.js')], {
    env: {
      ...process.env,
      PORT: '0',
      METRICS_PORT: String(metricsPort),
      OTEL_SDK_DISABLED: 'false',
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${database}`,
      NATS_PREFIX: `t${randomBytes(4).toString('hex')}`,
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const url = eventually(() => /listening on (http:\/\/localhost:\d+)/.exec(output)?.[1], {
    timeoutMs: startupBudgetMs(),
    message: 'the ready line',
  });
  return { child, url };
}

/** Scrapes /metrics: the text and its families by name. */
async function scrape(port: number) {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  const text = await res.text();
  return { text, families: new Map((parsePrometheusTextFormat(text) as Family[]).map((f) => [f.name, f])) };
}

/** The sum of a family's series whose labels include `labels`. */
function sumOf(f: Family | undefined, labels: Record<string, string> = {}): number {
  return (f?.metrics ?? [])
    .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    .reduce((n, m) => n + Number(m.value ?? 0), 0);
}

import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { eventually, freePort } from '@intake/shared/testing';
import { formWithWebhook, spawnAllInOne, startWebhookReceiver, stopAllInOne } from '../all-in-one';
import { scrape, sumOf } from './scrape';

/**
 * `npm start` with METRICS_PORT: its one /metrics has the instruments of its background threads too (delivery's
 * counters and the post → webhook histogram are recorded on the background thread), each family once, the series
 * of several threads added up.
 */
describe('npm start’s /metrics', () => {
  const database = `intake_aio_metrics_${randomBytes(4).toString('hex')}`;
  let child: ChildProcess | undefined;

  afterAll(() => stopAllInOne(child, database));

  it('serves the background threads’ deliveries, attempts and latency beside the main thread’s series', async () => {
    const metricsPort = await freePort();
    const started = spawnAllInOne(database, { METRICS_PORT: String(metricsPort), OTEL_SDK_DISABLED: 'false' });
    child = started.child;
    const url = await started.url;

    const receiver = await startWebhookReceiver();
    try {
      const { post } = await formWithWebhook(url, database, receiver.url);
      for (let i = 0; i < 3; i++) expect((await post(`name=Ada&n=${i}`)).status).toBe(201);
      await eventually(() => receiver.received.length >= 3, { message: 'the three webhooks' });

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

import { eventually, freePort } from '@intake/shared/testing';
import { faultSuite, formWithReceiver, pool, post, startService } from '../faults/harness';
import { scrape as scrapeMetrics, type Family } from './scrape';

/**
 * METRICS_PORT: each service process serves its metrics as Prometheus text at /metrics (beside OTLP push, off here),
 * scraped and parsed as Prometheus would. After posts whose webhooks arrived: the post → webhook latency histogram,
 * the attempts by outcome, the failing webhooks, and per consumer its pending count and the age of its oldest
 * unacknowledged message.
 */
describe('metrics Prometheus can scrape', () => {
  const suite = faultSuite();

  it('serves /metrics on METRICS_PORT with the post → webhook latency, attempts, failing webhooks and consumer ages', async () => {
    const { platform, processes } = suite;
    const { target, slug, env } = await formWithReceiver(platform);
    try {
      const [ingestPort, deliveryPort, managementPort] = [await freePort(), await freePort(), await freePort()];
      const metrics = (port: number) => ({ ...env, METRICS_PORT: String(port), OTEL_SDK_DISABLED: 'false' });
      const ingestLog: string[] = [];
      const ingest = await startService(
        'ingest',
        { ...metrics(ingestPort), LOG_LEVEL: 'info' },
        { ready: true, output: ingestLog },
      );
      // The start-up log says where the signals go: metrics on the port, and no traces (no OTLP endpoint).
      expect(ingestLog.join('')).toContain(
        `OpenTelemetry: metrics served on METRICS_PORT ${ingestPort} (no OTLP endpoint: no traces exported)`,
      );
      const delivery = await startService('delivery', metrics(deliveryPort), { ready: true });
      const management = await startService('management', metrics(managementPort), { ready: true });
      processes.push(ingest, delivery, management);
      const posts = await pool(6, 2, (i) => post(ingest.url, slug, { name: 'scraped', n: String(i) }));

      const scrape = async (port: number): Promise<Map<string, Family>> => {
        const scraped = await scrapeMetrics(port);
        expect(scraped.contentType).toMatch(/^text\/plain/);
        return scraped.families;
      };
      // The latency is recorded when each webhook's answer is: wait for all six.
      let families = new Map<string, Family>();
      const deadline = Date.now() + 20_000;
      for (;;) {
        families = await scrape(deliveryPort);
        const count = Number(families.get('intake_delivery_latency')?.metrics[0]?.buckets?.['+Inf'] ?? 0);
        if ((count >= posts.length && target.envelopes.length >= posts.length) || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const latency = families.get('intake_delivery_latency');
      const attempts = families.get('intake_delivery_attempts_total');
      const oldest = families.get('intake_consumer_oldest_pending_age');
      const submissions = (await scrape(ingestPort)).get('intake_submissions_total');
      console.log(
        `prometheus: ${families.size} families from delivery; latency ${JSON.stringify(latency?.metrics[0]?.buckets)}, ` +
          `attempts ${JSON.stringify(attempts?.metrics.map((m) => [m.labels, m.value]))}`,
      );
      expect(latency?.type).toBe('HISTOGRAM');
      expect(Number(latency?.metrics[0]?.buckets?.['+Inf'])).toBe(posts.length);
      expect(Object.keys(latency?.metrics[0]?.buckets ?? {})).toContain('1');
      // By outcome only: a series per webhook would reach the SDK's cap at 2,000 webhooks (intake.webhooks.failing).
      expect(attempts?.metrics).toContainEqual(
        expect.objectContaining({ labels: expect.objectContaining({ outcome: 'success' }), value: '6' }),
      );
      expect(attempts?.metrics.filter((m) => m.labels?.['webhook_id'] !== undefined)).toEqual([]);
      // One series, no label per webhook: a count of the database's failing webhooks (the worker's database holds other
      // files' too; shared/src/runtime/database-gauges.test.ts checks the count on a database of its own).
      const failing = families.get('intake_webhooks_failing')?.metrics ?? [];
      expect(failing).toHaveLength(1);
      expect(Number(failing[0]?.value)).toBeGreaterThanOrEqual(0);
      expect(Object.keys(failing[0]?.labels ?? {}).filter((l) => l !== 'otel_scope_name')).toEqual([]);
      expect(oldest?.metrics.map((m) => m.labels?.['consumer']).sort()).toEqual(
        expect.arrayContaining(['delivery-fanout', 'delivery-send']),
      );
      expect(submissions?.metrics).toContainEqual(
        expect.objectContaining({ labels: expect.objectContaining({ outcome: 'received' }), value: '6' }),
      );
      await zeroSeriesAndNatsGauges(scrape, { ingestPort, deliveryPort, managementPort });
    } finally {
      await target.close();
    }
  });
});

/**
 * The counters of rare failures are there at 0 from the start (so increase() sees the first), every process says it is
 * connected to NATS, and the send consumer's max_ack_pending is the one its pods set (SEND_MAX_ACK_PENDING's default).
 */
async function zeroSeriesAndNatsGauges(
  scrape: (port: number) => Promise<Map<string, Family>>,
  ports: { ingestPort: number; deliveryPort: number; managementPort: number },
): Promise<void> {
  const values = (family: Family | undefined, label: string) =>
    Object.fromEntries((family?.metrics ?? []).map((m) => [m.labels?.[label] ?? '', m.value]));
  // The purge and the relays start once NATS answers: wait for their series.
  const management = await eventually(async () => {
    const families = await scrape(ports.managementPort);
    return families.has('intake_purge_failures_total') && families.has('intake_outbox_oversized_total') && families;
  });
  expect(values(management.get('intake_purge_failures_total'), 'stage')).toEqual({ files: '0', rows: '0' });
  expect(values(management.get('intake_outbox_oversized_total'), 'outcome')).toEqual({ slimmed: '0', dropped: '0' });
  const ingest = await scrape(ports.ingestPort);
  expect(values(ingest.get('intake_outbox_oversized_total'), 'outcome')).toEqual({ slimmed: '0', dropped: '0' });
  // The outcomes answered 5xx (and spam: none was posted) at 0; received has counted the posts.
  expect(values(ingest.get('intake_submissions_total'), 'outcome')).toEqual(
    expect.objectContaining({ spam: '0', 'internal-error': '0', 'bad-gateway': '0', 'service-unavailable': '0' }),
  );
  const delivery = await scrape(ports.deliveryPort);
  for (const families of [management, ingest, delivery])
    expect(families.get('intake_nats_connected')?.metrics).toEqual([expect.objectContaining({ value: '1' })]);
  expect(
    delivery
      .get('intake_consumer_max_ack_pending')
      ?.metrics.filter((m) => m.labels?.['consumer'] === 'delivery-send')
      .map((m) => m.value),
  ).toEqual(['10000']);
}

import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { DataPointType, type Histogram, type ScopeMetrics } from '@opentelemetry/sdk-metrics';
import { mergeScopeMetrics, OnRequestMetricReader } from './thread-metrics';

/** What one thread's SDK collects after recording `n` of each: a counter, a histogram and a gauge. */
async function threadMetrics(n: number, gauge: number): Promise<ScopeMetrics[]> {
  const reader = new OnRequestMetricReader();
  const provider = new MeterProvider({ readers: [reader] });
  const meter = provider.getMeter('intake');
  const counter = meter.createCounter('intake.deliveries');
  const histogram = meter.createHistogram('intake.delivery.latency', { advice: { explicitBucketBoundaries: [1, 5] } });
  meter.createObservableGauge('intake.outbox.pending').addCallback((r) => r.observe(gauge));
  for (let i = 0; i < n; i++) {
    counter.add(1, { outcome: 'succeeded' });
    histogram.record(i + 0.5);
  }
  const { resourceMetrics } = await reader.collect();
  await provider.shutdown();
  return resourceMetrics.scopeMetrics;
}

describe('the metrics of a process’s threads as one', () => {
  it('adds up counters and histograms per attribute set, keeps the first gauge, and names each metric once', async () => {
    const merged = mergeScopeMetrics([...(await threadMetrics(2, 7)), ...(await threadMetrics(3, 9))]);
    expect(merged).toHaveLength(1);
    const byName = new Map(merged[0]!.metrics.map((m) => [m.descriptor.name, m]));
    expect(merged[0]!.metrics).toHaveLength(3);
    const deliveries = byName.get('intake.deliveries')!;
    expect(deliveries.dataPointType).toBe(DataPointType.SUM);
    expect(deliveries.dataPoints.map((p) => [p.attributes, p.value])).toEqual([[{ outcome: 'succeeded' }, 5]]);
    const latency = byName.get('intake.delivery.latency')!.dataPoints[0]!.value as Histogram;
    // 0.5, 1.5 and 0.5, 1.5, 2.5: two at most 1, three in (1, 5].
    expect(latency).toMatchObject({ count: 5, sum: 6.5, min: 0.5, max: 2.5, buckets: { counts: [2, 3, 0] } });
    expect(byName.get('intake.outbox.pending')!.dataPoints.map((p) => p.value)).toEqual([7]);
  });
});

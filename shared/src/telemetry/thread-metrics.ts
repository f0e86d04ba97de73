import type { MessagePort } from 'node:worker_threads';
import type { HrTime } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import {
  DataPointType,
  MetricReader,
  type CollectionResult,
  type DataPoint,
  type Histogram,
  type MetricCollectOptions,
  type MetricData,
  type MetricProducer,
  type ScopeMetrics,
} from '@opentelemetry/sdk-metrics';

/**
 * One `/metrics` for a process with threads (`npm start`: the relay and delivery on a background thread, usage and
 * management's workers on a bookkeeping thread). Each thread has an SDK of its own, whose instruments its main thread
 * never sees; OpenTelemetry JS has no multi-thread aggregation, but a reader accepts extra `MetricProducer`s, whose
 * scope metrics it adds to its own at each collection. So:
 *
 * - a thread reads its metrics with `OnRequestMetricReader` (no timer, no push) and answers each request from its
 *   main thread on a `MessagePort` with its scope metrics (`answerMetricRequests`);
 * - the main thread's Prometheus reader (`ProcessPrometheusExporter`) has `threadMetricsProducer`, which asks every
 *   registered thread (`collectFromThread`) when Prometheus scrapes, and merges what comes back with its own: one
 *   series per metric and attributes for the whole process (counters and histograms added up, a gauge the first
 *   observed, the main thread's), so a metric two threads record (a `pg` client's durations) is not two families.
 */

/** What a thread's `MessagePort` carries: a request for its metrics, and its answer. */
type MetricRequest = { type: 'collect'; id: number };
type MetricAnswer = { type: 'metrics'; id: number; scopeMetrics: ScopeMetrics[]; errors: string[] };

/** How long a scrape waits for a thread's metrics (the thread may be busy); after that it serves without them. */
const THREAD_ANSWER_MS = 5000;

/** A reader that collects only when asked (a thread's, for its main thread; cumulative, as Prometheus wants). */
export class OnRequestMetricReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** In a thread: answers its main thread's requests on `port` with what `reader` collects. */
export function answerMetricRequests(port: MessagePort, reader: MetricReader): void {
  port.on('message', (message: MetricRequest) => {
    if (message?.type !== 'collect') return;
    reader.collect().then(
      ({ resourceMetrics, errors }) =>
        port.postMessage({
          type: 'metrics',
          id: message.id,
          scopeMetrics: resourceMetrics.scopeMetrics,
          errors: errors.map((e) => String(e)),
        } satisfies MetricAnswer),
      (err: unknown) =>
        port.postMessage({
          type: 'metrics',
          id: message.id,
          scopeMetrics: [],
          errors: [String(err)],
        } satisfies MetricAnswer),
    );
  });
  // The port must not keep the thread alive once its work has stopped.
  port.unref();
}

type ThreadSource = (timeoutMs: number) => Promise<{ scopeMetrics: ScopeMetrics[]; errors: string[] }>;
const threads = new Set<ThreadSource>();

/**
 * In the main thread: adds a thread's metrics (asked on `port`, which `answerMetricRequests` serves in the thread)
 * to every collection of `threadMetricsProducer`. Returns a function that removes them (the thread stopped).
 */
export function collectFromThread(port: MessagePort): () => void {
  let next = 0;
  const waiting = new Map<number, (answer: MetricAnswer) => void>();
  port.on('message', (answer: MetricAnswer) => {
    if (answer?.type !== 'metrics') return;
    waiting.get(answer.id)?.(answer);
    waiting.delete(answer.id);
  });
  port.unref();
  const source: ThreadSource = (timeoutMs) =>
    new Promise((resolve) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve({ scopeMetrics: [], errors: [`a thread did not answer for its metrics within ${timeoutMs} ms`] });
      }, timeoutMs);
      timer.unref();
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      port.postMessage({ type: 'collect', id } satisfies MetricRequest);
    });
  threads.add(source);
  return () => {
    threads.delete(source);
    for (const resolve of waiting.values()) resolve({ type: 'metrics', id: -1, scopeMetrics: [], errors: [] });
    waiting.clear();
    port.close();
  };
}

/** The threads' metrics, for the main thread's reader (their resource is dropped: the process's is the reader's). */
export const threadMetricsProducer: MetricProducer = {
  async collect(options?: MetricCollectOptions): Promise<CollectionResult> {
    const timeoutMs = Math.min(options?.timeoutMillis ?? THREAD_ANSWER_MS, THREAD_ANSWER_MS);
    const answers = await Promise.all([...threads].map((ask) => ask(timeoutMs)));
    return {
      resourceMetrics: {
        // Ignored by MetricReader.collect, which keeps the SDK's resource.
        resource: undefined as never,
        scopeMetrics: answers.flatMap((a) => a.scopeMetrics),
      },
      errors: answers.flatMap((a) => a.errors.map((e) => new Error(e))),
    };
  },
};

/**
 * The main thread's Prometheus reader: its collection (its own instruments, then each thread's) merged into one
 * family per metric before it is written as Prometheus text.
 */
export class ProcessPrometheusExporter extends PrometheusExporter {
  override async collect(options?: MetricCollectOptions): Promise<CollectionResult> {
    const result = await super.collect(options);
    return {
      ...result,
      resourceMetrics: {
        ...result.resourceMetrics,
        scopeMetrics: mergeScopeMetrics(result.resourceMetrics.scopeMetrics),
      },
    };
  }
}

/**
 * Scope metrics of several threads as one process's: one scope per name and version, one metric per name and kind,
 * one data point per attribute set. Sums and histograms (cumulative, same buckets) are added up; of gauges (and of
 * histograms whose buckets differ), the first is kept.
 */
export function mergeScopeMetrics(all: ScopeMetrics[]): ScopeMetrics[] {
  const scopes = new Map<string, { scope: ScopeMetrics['scope']; metrics: Map<string, MetricData> }>();
  for (const { scope, metrics } of all) {
    const scopeKey = `${scope.name}\u0000${scope.version ?? ''}\u0000${scope.schemaUrl ?? ''}`;
    let into = scopes.get(scopeKey);
    if (!into) scopes.set(scopeKey, (into = { scope, metrics: new Map() }));
    for (const metric of metrics) {
      const key = `${metric.descriptor.name}\u0000${metric.dataPointType}`;
      const seen = into.metrics.get(key);
      into.metrics.set(key, seen ? mergeMetric(seen, metric) : copyMetric(metric));
    }
  }
  return [...scopes.values()].map(({ scope, metrics }) => ({ scope, metrics: [...metrics.values()] }));
}

function copyMetric(metric: MetricData): MetricData {
  return { ...metric, dataPoints: [...metric.dataPoints] } as MetricData;
}

function attributesKey(point: DataPoint<unknown>): string {
  return JSON.stringify(Object.entries(point.attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function mergeMetric(into: MetricData, from: MetricData): MetricData {
  const points = new Map(into.dataPoints.map((p: DataPoint<unknown>) => [attributesKey(p), p]));
  for (const point of from.dataPoints as DataPoint<unknown>[]) {
    const key = attributesKey(point);
    const seen = points.get(key);
    if (!seen) {
      points.set(key, point);
      continue;
    }
    if (into.dataPointType === DataPointType.SUM)
      points.set(key, { ...spanOf(seen, point), value: (seen.value as number) + (point.value as number) });
    else if (into.dataPointType === DataPointType.HISTOGRAM) {
      const sum = addHistograms(seen.value as Histogram, point.value as Histogram);
      if (sum) points.set(key, { ...spanOf(seen, point), value: sum });
    }
    // A gauge: the first observed stays (the main thread's, whose scope metrics come first).
  }
  return { ...into, dataPoints: [...points.values()] } as MetricData;
}

/** The two points' attributes, from the earlier start to the later end. */
function spanOf(a: DataPoint<unknown>, b: DataPoint<unknown>) {
  return {
    attributes: a.attributes,
    startTime: compareHrTime(a.startTime, b.startTime) <= 0 ? a.startTime : b.startTime,
    endTime: compareHrTime(a.endTime, b.endTime) >= 0 ? a.endTime : b.endTime,
  };
}

function compareHrTime(a: HrTime, b: HrTime): number {
  return a[0] - b[0] || a[1] - b[1];
}

/** Two cumulative histograms added up; undefined when their buckets differ (they cannot be). */
function addHistograms(a: Histogram, b: Histogram): Histogram | undefined {
  const same =
    a.buckets.boundaries.length === b.buckets.boundaries.length &&
    a.buckets.boundaries.every((x, i) => x === b.buckets.boundaries[i]);
  if (!same) return undefined;
  const defined = (xs: (number | undefined)[]) => xs.filter((x): x is number => x !== undefined);
  const mins = defined([a.min, b.min]);
  const maxes = defined([a.max, b.max]);
  return {
    buckets: {
      boundaries: a.buckets.boundaries,
      counts: a.buckets.counts.map((c, i) => c + (b.buckets.counts[i] ?? 0)),
    },
    count: a.count + b.count,
    ...(a.sum !== undefined || b.sum !== undefined ? { sum: (a.sum ?? 0) + (b.sum ?? 0) } : {}),
    ...(mins.length > 0 ? { min: Math.min(...mins) } : {}),
    ...(maxes.length > 0 ? { max: Math.max(...maxes) } : {}),
  };
}

import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PeriodicExportingMetricReader, type MetricReader } from '@opentelemetry/sdk-metrics';
import type { NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { KoaInstrumentation } from '@opentelemetry/instrumentation-koa';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { isMainThread, MessagePort, workerData } from 'node:worker_threads';
import {
  answerMetricRequests,
  OnRequestMetricReader,
  ProcessPrometheusExporter,
  threadMetricsProducer,
} from './thread-metrics';

/**
 * OpenTelemetry for one process: traces and metrics exported over OTLP/HTTP, configured by the
 * standard `OTEL_*` variables (endpoint, headers, protocol, sampler, resource attributes, export
 * interval). OFF unless an OTLP endpoint is set, so `npm start` and the tests pay nothing.
 *
 * It must start before koa, pg, ioredis and http are loaded for their instrumentations to
 * patch them: entry points import `@intake/shared/register` first (see register.ts).
 */
export interface Telemetry {
  /** True when an SDK was started (an OTLP endpoint is configured, or a test passed its own processors). */
  readonly enabled: boolean;
  readonly serviceName: string;
  /** Where its signals go, in words for the start-up log (empty when it is off). */
  readonly destination: string;
  /** Flushes pending spans and metrics and stops the exporters (called on shutdown). */
  shutdown(): Promise<void>;
}

export interface TelemetryOptions {
  serviceName: string;
  /** The environment (process.env in entry points); only OTEL_* variables are read here, the SDK reads the rest itself. */
  env: Record<string, string | undefined>;
  /** Tests: export spans to these processors (e.g. an in-memory exporter) instead of OTLP; enables telemetry. */
  spanProcessors?: NodeSDKConfiguration['spanProcessors'];
  /** Tests: read metrics with these readers instead of OTLP. */
  metricReaders?: NodeSDKConfiguration['metricReaders'];
}

/** Probe paths produce no spans: Kubernetes and Docker hit them every few seconds. */
const UNTRACED_PATHS = new Set(['/livez', '/readyz']);

export function telemetryConfigured(env: Record<string, string | undefined>): boolean {
  if (/^true$/i.test(env['OTEL_SDK_DISABLED'] ?? '')) return false;
  return otlpConfigured(env) || metricsPort(env) !== undefined || parentMetricsPort() !== undefined;
}

/** True when this process serves Prometheus text on METRICS_PORT (its threads then send it their metrics). */
export function servesPrometheus(env: Record<string, string | undefined>): boolean {
  return telemetryConfigured(env) && metricsPort(env) !== undefined;
}

/**
 * In a thread of `startBackgroundThread` whose process serves METRICS_PORT: the port on which its main thread asks
 * for its metrics (thread-metrics.ts).
 */
function parentMetricsPort(): MessagePort | undefined {
  if (isMainThread) return undefined;
  const port = (workerData as { metricsPort?: unknown } | null | undefined)?.metricsPort;
  return port instanceof MessagePort ? port : undefined;
}

function otlpConfigured(env: Record<string, string | undefined>): boolean {
  return Boolean(
    env['OTEL_EXPORTER_OTLP_ENDPOINT'] ||
    env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ||
    env['OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'],
  );
}

/** METRICS_PORT: where Prometheus scrapes `/metrics` (loadConfig checks it too; telemetry starts before it). */
function metricsPort(env: Record<string, string | undefined>): number | undefined {
  const port = Number(env['METRICS_PORT']);
  return env['METRICS_PORT'] && Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
}

/**
 * The metric readers: OTLP push (when an endpoint is set) and Prometheus text on METRICS_PORT (when set), side by
 * side; undefined leaves the SDK's own choice from the OTEL_* variables. The Prometheus text includes the metrics of
 * the process's threads, which, instead of a server of their own, answer their main thread's requests
 * (thread-metrics.ts).
 */
function metricReaders(env: Record<string, string | undefined>): MetricReader[] | undefined {
  const port = metricsPort(env);
  const toParent = parentMetricsPort();
  if (port === undefined && !toParent) return undefined;
  const otlp = otlpConfigured(env) ? [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter() })] : [];
  if (toParent) {
    const reader = new OnRequestMetricReader();
    answerMetricRequests(toParent, reader);
    return [reader, ...otlp];
  }
  return [new ProcessPrometheusExporter({ port, host: '0.0.0.0', metricProducers: [threadMetricsProducer] }), ...otlp];
}

/**
 * `intake-<service>` from the entry script's path (`services/<name>/dist/main.js`); `intake` for the all-in-one
 * process (`dist/all-in-one.js`).
 */
export function serviceNameFromEntry(entry: string | undefined): string {
  const match =
    /services[\\/](ingest|management|delivery|usage)[\\/](?:dist|src)[\\/](main|cli[\\/][\w-]+)\.[jt]s$/.exec(
      entry ?? '',
    );
  if (!match) return 'intake';
  if (match[2]?.startsWith('cli')) return `intake-${match[2].replace(/^cli[\\/]/, '')}`;
  return `intake-${match[1]}`;
}

/**
 * A request's query as a SERVER span keeps it (`url.query`): the names, every value `REDACTED`. Values are what the
 * caller chose, and some are credentials or personal data: a file link's `signature`, a data-subject lookup's
 * `email`. The instrumentation's own redaction covers a fixed list of names (AWS's, Google's, Azure's) only.
 */
export function redactedQuery(url: string | undefined): string | undefined {
  const at = (url ?? '').indexOf('?');
  if (at < 0 || at === (url ?? '').length - 1) return undefined;
  const params = new URLSearchParams((url ?? '').slice(at + 1));
  for (const key of new Set(params.keys())) params.set(key, 'REDACTED');
  return params.toString();
}

export function instrumentations() {
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0] ?? ''),
      // Its attributes are laid over the instrumentation's own, so this `url.query` is the one the span keeps.
      startIncomingSpanHook: (req) => {
        const query = redactedQuery(req.url);
        return query === undefined ? {} : { 'url.query': query };
      },
    }),
    new KoaInstrumentation(),
    new PgInstrumentation({ requireParentSpan: true }),
    new IORedisInstrumentation({ requireParentSpan: true }),
  ];
}

let current: Telemetry | undefined;

/** Starts the SDK once per process; later calls return the same handle (so main.ts and runStandalone can both ask). */
export function startTelemetry(options: TelemetryOptions): Telemetry {
  if (current) return current;
  const testing = Boolean(options.spanProcessors || options.metricReaders);
  if (!testing && !telemetryConfigured(options.env)) {
    current = { enabled: false, serviceName: options.serviceName, destination: '', shutdown: async () => undefined };
    return current;
  }
  const readers = options.metricReaders ?? metricReaders(options.env);
  // Spans go over OTLP only: with METRICS_PORT alone there is nowhere to send them.
  const spans = options.spanProcessors ?? (otlpConfigured(options.env) || testing ? undefined : []);
  const sdk = new NodeSDK({
    serviceName: options.env['OTEL_SERVICE_NAME'] ? undefined : options.serviceName,
    instrumentations: instrumentations(),
    // Logs stay structured JSON on stdout (with trace_id); they are not shipped over OTLP.
    logRecordProcessors: [],
    ...(spans ? { spanProcessors: spans } : {}),
    ...(readers ? { metricReaders: readers } : {}),
  });
  sdk.start();
  let stopping: Promise<void> | undefined;
  const port = metricsPort(options.env);
  current = {
    enabled: true,
    serviceName: options.env['OTEL_SERVICE_NAME'] ?? options.serviceName,
    destination: otlpConfigured(options.env)
      ? `traces and metrics exported over OTLP${port ? `, metrics also on METRICS_PORT ${port}` : ''}`
      : port
        ? `metrics served on METRICS_PORT ${port} (no OTLP endpoint: no traces exported)`
        : 'to the test readers',
    shutdown: () => (stopping ??= sdk.shutdown().catch(() => undefined)),
  };
  return current;
}

/** Tests only: forget the started SDK after shutting it down, so another test file can start its own. */
export async function resetTelemetryForTests(): Promise<void> {
  await current?.shutdown();
  current = undefined;
}

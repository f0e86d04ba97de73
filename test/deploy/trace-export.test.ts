import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { connect } from 'nats';
import { eventually, listen, migratedTestDatabase, testDatabaseUrl, uniqueNatsPrefix } from '@intake/shared/testing';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: Record<string, unknown> }[];
}
const KIND = { SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 };

/**
 * The production wiring end to end: a process that imports `@intake/shared/register` first,
 * configured only by OTEL_* variables, exports over OTLP/HTTP to a real local receiver one trace
 * running from the HTTP request (http + koa + pg instrumentations) through the outbox relay's
 * publish to the JetStream consumer; and the catalog's backlog gauges as OTLP metrics.
 */
/** A local OTLP/HTTP (JSON) receiver that keeps the spans, the resources of the traces and the metric names. */
async function startOtlpReceiver() {
  const spans: OtlpSpan[] = [];
  const metricNames = new Set<string>();
  const resources: Record<string, unknown>[] = [];
  const server = await listen((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const doc = JSON.parse(body || '{}');
      if (req.url === '/v1/traces') {
        for (const rs of doc.resourceSpans ?? []) {
          resources.push(
            Object.fromEntries(
              (rs.resource?.attributes ?? []).map((a: { key: string; value: { stringValue?: string } }) => [
                a.key,
                a.value.stringValue,
              ]),
            ),
          );
          for (const ss of rs.scopeSpans ?? []) spans.push(...ss.spans);
        }
      }
      if (req.url === '/v1/metrics')
        for (const rm of doc.resourceMetrics ?? [])
          for (const sm of rm.scopeMetrics ?? []) for (const m of sm.metrics ?? []) metricNames.add(m.name);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return { url: server.url, close: () => server.close(), spans, metricNames, resources };
}

/**
 * For the whole file: the OTLP receiver and the trace probe process exporting to it, on the migrated
 * test database and streams of its own (deleted after).
 */
function useTraceProbe() {
  const probe = {
    receiver: undefined as unknown as Awaited<ReturnType<typeof startOtlpReceiver>>,
    url: '',
  };
  const prefix = uniqueNatsPrefix();
  let child: ChildProcess;
  let output = '';

  beforeAll(async () => {
    probe.receiver = await startOtlpReceiver();
    await migratedTestDatabase();
    child = spawn(process.execPath, [path.join(__dirname, 'fixtures/trace-probe.js')], {
      env: {
        ...process.env,
        DATABASE_URL: testDatabaseUrl(),
        NATS_PREFIX: prefix,
        LOG_LEVEL: 'warn',
        OTEL_EXPORTER_OTLP_ENDPOINT: probe.receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'intake-trace-probe',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        OTEL_METRIC_EXPORT_INTERVAL: '200',
        OTEL_METRIC_EXPORT_TIMEOUT: '200',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    probe.url = await eventually(() => /"url":"([^"]+)"/.exec(output)?.[1], {
      timeoutMs: 20_000,
      message: `the probe to listen (${output})`,
    });
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000).unref())]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await probe.receiver?.close();
    const nc = await connect({ servers: '127.0.0.1:4222' });
    const jsm = await nc.jetstreamManager();
    for (const s of ['EVENTS', 'DELIVERIES'])
      await jsm.streams.delete(`${prefix.toUpperCase()}_${s}`).catch(() => undefined);
    await nc.close();
  });

  return probe;
}

describe('telemetry export from a service process (OTLP/HTTP)', () => {
  const probe = useTraceProbe();

  it('exports one trace from the form post through the outbox relay to the consumer', async () => {
    const { spans, resources } = probe.receiver;
    const res = await fetch(`${probe.url}/v1/f/contact`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(202);
    const { event_id: eventId } = (await res.json()) as { event_id: string };
    const attr = (s: OtlpSpan, key: string) => s.attributes?.find((a) => a.key === key)?.value['stringValue'];
    const producer = await eventually(
      () => spans.find((s) => s.kind === KIND.PRODUCER && attr(s, 'messaging.message.id') === eventId),
      { message: 'the publish span' },
    );
    const server = await eventually(() => spans.find((s) => s.kind === KIND.SERVER && s.traceId === producer.traceId), {
      message: 'the HTTP server span in the same trace',
    });
    const consumer = await eventually(
      () => spans.find((s) => s.kind === KIND.CONSUMER && s.parentSpanId === producer.spanId),
      { message: 'the consumer span' },
    );
    expect(consumer.traceId).toBe(server.traceId);
    expect(server.parentSpanId ?? '').toBe('');
    const trace = spans.filter((s) => s.traceId === server.traceId);
    // Koa and pg instrumentation patched their modules: register ran before they loaded.
    expect(trace.some((s) => attr(s, 'koa.type') !== undefined || /^(middleware|router)/i.test(s.name))).toBe(true);
    expect(
      trace.some(
        (s) =>
          (s.kind === KIND.CLIENT && attr(s, 'db.system') === 'postgresql') ||
          attr(s, 'db.system.name') === 'postgresql',
      ),
    ).toBe(true);
    expect(resources).toContainEqual(expect.objectContaining({ 'service.name': 'intake-trace-probe' }));
  });

  it('exports the backlog gauges of the metric catalog', async () => {
    const { metricNames } = probe.receiver;
    await eventually(() => metricNames.has('intake.consumer.pending') && metricNames.has('intake.outbox.lag'), {
      message: `backlog gauges (got ${[...metricNames].join(', ')})`,
    });
  });
});

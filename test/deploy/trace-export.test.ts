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
describe('telemetry export from a service process (OTLP/HTTP)', () => {
  const spans: OtlpSpan[] = [];
  const metricNames = new Set<string>();
  const resources: Record<string, unknown>[] = [];
  const prefix = uniqueNatsPrefix();
  let receiver: Awaited<ReturnType<typeof listen>>;
  let child: ChildProcess;
  let url = '';
  let output = '';

  beforeAll(async () => {
    receiver = await listen((req, res) => {
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
    await migratedTestDatabase();
    child = spawn(process.execPath, [path.join(__dirname, 'fixtures/trace-probe.js')], {
      env: {
        ...process.env,
        DATABASE_URL: testDatabaseUrl(),
        NATS_PREFIX: prefix,
        LOG_LEVEL: 'warn',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
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
    url = await eventually(() => /"url":"([^"]+)"/.exec(output)?.[1], {
      timeoutMs: 20_000,
      message: `the probe to listen (${output})`,
    });
  }, 30_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000).unref())]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await receiver?.close();
    const nc = await connect({ servers: '127.0.0.1:4222' });
    const jsm = await nc.jetstreamManager();
    for (const s of ['EVENTS', 'DELIVERIES'])
      await jsm.streams.delete(`${prefix.toUpperCase()}_${s}`).catch(() => undefined);
    await nc.close();
  });

  it('exports one trace from the form post through the outbox relay to the consumer', async () => {
    const res = await fetch(`${url}/v1/f/contact`, {
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
    await eventually(() => metricNames.has('intake.consumer.pending') && metricNames.has('intake.outbox.lag'), {
      message: `backlog gauges (got ${[...metricNames].join(', ')})`,
    });
  });
});

import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { tracing, metrics as sdkMetrics } from '@opentelemetry/sdk-node';
import http from 'node:http';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '@intake/shared/base';
import { instrumentations, resetTelemetryForTests, startTelemetry } from '@intake/shared/telemetry';
import { buildServiceApp, type Worker } from '@intake/shared/runtime';
import {
  createTestPlatform,
  eventually,
  factories,
  listen,
  type TestPlatform,
  startTestRelay,
} from '@intake/shared/testing';
import { ingestService } from '@intake/ingest';
import { deliveryService } from '@intake/delivery';

type Span = tracing.ReadableSpan;

/**
 * Jest's sandbox hands the instrumentations a stand-in `module`, so their require() hook never
 * sees `http` (register.ts does, in a service process). This applies the same configured http
 * instrumentation's patch to the real module by hand, and returns its undo: `http` is shared by
 * every test file of this Jest worker.
 */
function patchHttpServer(): () => Promise<void> {
  const instrumentation = instrumentations().find(
    (i) => i.instrumentationName === '@opentelemetry/instrumentation-http',
  );
  const definition = instrumentation?.getModuleDefinitions().find((d) => d.name === 'http');
  if (!definition?.patch || !definition.unpatch) throw new Error('the http instrumentation has no patch for http');
  definition.patch(http);
  return async () => definition.unpatch?.(http);
}

/** Every data point now, as `name{attr=value,...}` -> value (a histogram's count). */
async function snapshot(reader: sdkMetrics.MetricReader): Promise<Map<string, number>> {
  const { resourceMetrics } = await reader.collect();
  const points = new Map<string, number>();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      for (const p of metric.dataPoints as {
        attributes: Record<string, unknown>;
        value: number | { count: number };
      }[]) {
        const attrs = Object.entries(p.attributes)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(',');
        points.set(`${metric.descriptor.name}{${attrs}}`, typeof p.value === 'number' ? p.value : p.value.count);
      }
    }
  }
  return points;
}

function diff(after: Map<string, number>, before: Map<string, number>, key: string): number {
  return (after.get(key) ?? 0) - (before.get(key) ?? 0);
}

/**
 * For the whole describe: the SDK exporting to memory, the http server patch, a test platform with
 * the delivery workers and a relay, the ingest app, and a webhook receiver.
 */
function usePipelineWithTelemetry() {
  const ctx = {
    exporter: new tracing.InMemorySpanExporter(),
    reader: new sdkMetrics.PeriodicExportingMetricReader({
      exporter: new sdkMetrics.InMemoryMetricExporter(sdkMetrics.AggregationTemporality.CUMULATIVE),
      exportIntervalMillis: 3_600_000,
    }),
    platform: undefined as unknown as TestPlatform,
    ingestUrl: '',
    /** What the receiver got, by path; `/flaky` answers 500 to the first attempt of every delivery. */
    received: [] as { path: string; headers: Record<string, string | string[] | undefined> }[],
    receiverUrl: '',
  };
  const workers: Worker[] = [];
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    startTelemetry({
      serviceName: 'intake-test',
      env: {},
      spanProcessors: [new tracing.SimpleSpanProcessor(ctx.exporter)],
      metricReaders: [ctx.reader],
    });
    closers.push(patchHttpServer());
    const platform = (ctx.platform = await createTestPlatform({
      WEBHOOK_RETRY_SCHEDULE: '50ms',
      WEBHOOK_TIMEOUT_MS: 2000,
    }));
    const receiver = await listen((req, res) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      ctx.received.push({ path, headers: req.headers });
      req.resume();
      req.on('end', () =>
        res.writeHead(path === '/flaky' && req.headers['x-service-attempt'] === '1' ? 500 : 200).end('ok'),
      );
    });
    ctx.receiverUrl = receiver.url;
    closers.push(receiver.close);
    workers.push(...(await deliveryService.startWorkers(platform)));
    // The checkout's test database keeps events other test files stored without a relay (their
    // webhooks point nowhere): this file's relay would publish them and its workers count their
    // failed deliveries in the metrics this file checks.
    await platform.db('outbox').delete();
    workers.push(startTestRelay(platform));
    const ingest = await listen(buildServiceApp(ingestService, platform).callback());
    ctx.ingestUrl = ingest.url;
    closers.push(ingest.close);
  });

  afterAll(async () => {
    await Promise.allSettled(workers.map((w) => w.stop()));
    for (const close of closers) await close();
    await ctx.platform?.close();
    await resetTelemetryForTests();
  });

  return ctx;
}
type Pipeline = ReturnType<typeof usePipelineWithTelemetry>;

/** What the tests do and look at: forms with webhooks, posts, the finished spans, the delivery rows. */
function pipelineSteps(ctx: Pipeline) {
  /** The webhooks this file made (its deliveries are the ones its metrics count). */
  const webhookIds: string[] = [];
  const spans = () => ctx.exporter.getFinishedSpans();
  return {
    spans,
    snapshot: () => snapshot(ctx.reader),
    async formWithWebhook(path: string, notifyEmails: string[] = []) {
      const account = await factories.account(ctx.platform.db);
      const form = await factories.form(ctx.platform.db, account.id, { notify_emails: notifyEmails });
      const url = `${ctx.receiverUrl}${path}?token=s3cret&v=2`;
      const { id: webhookId } = await factories.webhook(ctx.platform, { accountId: account.id, formId: form.id, url });
      webhookIds.push(webhookId);
      return { slug: form.slug, webhookId };
    },
    /**
     * Waits until every delivery of this file has finished and been counted (the count follows the
     * commit of its last attempt): an earlier test's delivery must not be counted during a later one.
     */
    async deliveriesSettled(): Promise<void> {
      await eventually(
        async () => {
          const rows = await ctx.platform.db('deliveries').whereIn('webhook_id', webhookIds).select('status');
          const finished = rows.filter((r) => r.status === 'succeeded' || r.status === 'failed').length;
          const s = await snapshot(ctx.reader);
          const counted =
            (s.get('intake.deliveries{outcome=succeeded}') ?? 0) + (s.get('intake.deliveries{outcome=failed}') ?? 0);
          return finished === rows.length && counted === finished;
        },
        { message: "every delivery of this file's earlier tests finished and counted" },
      );
    },
    post: (slug: string, body: string) =>
      fetch(`${ctx.ingestUrl}/v1/f/${slug}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body,
      }),
    parentOf: (span: Span) => spans().find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId),
    attemptSpans: (deliveryId: string) =>
      spans()
        .filter((s) => s.kind === SpanKind.CLIENT && s.attributes['intake.webhook.delivery_id'] === deliveryId)
        .sort(
          (a, b) => Number(a.attributes['intake.webhook.attempt']) - Number(b.attributes['intake.webhook.attempt']),
        ),
    deliveryOf: (submissionId: string) =>
      eventually(() => ctx.platform.db('deliveries').where({ submission_id: submissionId }).first(), {
        message: 'the delivery row',
      }),
  };
}
type Steps = ReturnType<typeof pipelineSteps>;

/**
 * Walks up from the webhook attempt to the form post, one direct parent at a time (the consumer
 * spans end after their ack, a moment after the attempt).
 */
async function fiveAncestors(steps: Steps, client: Span) {
  return (await eventually(
    () => {
      const chain: Span[] = [];
      for (let span = steps.parentOf(client); span; span = steps.parentOf(span)) chain.push(span);
      return chain.length === 5 && chain;
    },
    { message: 'the five ancestors of the attempt span' },
  )) as [Span, Span, Span, Span, Span];
}

/** The attempt's ancestors are the send consumer, the delivery.requested publish, the fan-out, the relay and the post. */
function expectPipelineChain(ctx: Pipeline, chain: [Span, Span, Span, Span, Span], deliveryId: string) {
  const [send, requested, fanOut, relay, server] = chain;
  // Named and described as the OpenTelemetry messaging conventions say: `{operation name} {destination}`.
  const consumedBy = (group: string) => ({
    kind: SpanKind.CONSUMER,
    name: expect.stringMatching(/^process [a-z0-9_]+\.[a-z.]+$/),
    attributes: expect.objectContaining({
      'messaging.system': 'nats',
      'messaging.operation.type': 'process',
      'messaging.consumer.group.name': group,
    }),
  });
  const publishing = (subject: string) => ({
    kind: SpanKind.PRODUCER,
    name: `publish ${ctx.platform.nats.names.subject(subject)}`,
    attributes: expect.objectContaining({
      'messaging.system': 'nats',
      'messaging.operation.type': 'send',
      'messaging.destination.name': ctx.platform.nats.names.subject(subject),
    }),
  });
  expect(send).toMatchObject(consumedBy('delivery-send'));
  expect(requested).toMatchObject(publishing('delivery.requested'));
  expect(requested.attributes['intake.webhook.delivery_id']).toBe(deliveryId);
  expect(fanOut).toMatchObject(consumedBy('delivery-fanout'));
  expect(relay).toMatchObject(publishing('submission.created'));
  expect(server.kind).toBe(SpanKind.SERVER);
  expect(server.attributes['http.route'] ?? server.attributes['url.path'] ?? server.attributes['http.target']).toMatch(
    /^\/v1\/f\//,
  );
  expect(server.parentSpanContext).toBeUndefined();
}

/** The trace from the form post to each webhook attempt, and a failed attempt's span. */
function traceCases(ctx: Pipeline, steps: Steps) {
  const { post, spans, attemptSpans, deliveryOf, formWithWebhook } = steps;
  it('runs one trace: HTTP SERVER -> outbox publish -> fan-out -> delivery.requested publish -> send -> webhook CLIENT span', async () => {
    const { slug, webhookId } = await formWithWebhook('/hook');
    const res = await post(slug, JSON.stringify({ name: 'Ada' }));
    expect(res.status).toBe(201);
    const { id: submissionId } = (await res.json()) as { id: string };
    const delivery = await deliveryOf(submissionId);
    const [client] = await eventually(() => attemptSpans(delivery.id).length === 1 && attemptSpans(delivery.id), {
      message: 'the attempt span',
    });

    const [send, requested, fanOut, relay, server] = await fiveAncestors(steps, client!);
    expectPipelineChain(ctx, [send, requested, fanOut, relay, server], delivery.id);
    const traceId = server.spanContext().traceId;
    expect(new Set([client, send, requested, fanOut, relay].map((s) => s!.spanContext().traceId))).toEqual(
      new Set([traceId]),
    );
    // The transaction that stored the post may store others too: its span has a trace of its own, linked to the post's.
    const group = spans().find(
      (s) => s.name === 'ingest store group' && s.links.some((l) => l.context.traceId === traceId),
    );
    expect(group?.spanContext().traceId).not.toBe(traceId);
    expect(group?.attributes['intake.ingest.group_size']).toBe(1);

    expect(client!.name).toBe('POST');
    expect(client!.status.code).toBe(SpanStatusCode.UNSET);
    expect(client!.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.full': `${ctx.receiverUrl}/hook?token=REDACTED&v=REDACTED`,
      'http.response.status_code': 200,
      'intake.webhook.id': webhookId,
      'intake.webhook.delivery_id': delivery.id,
      'intake.webhook.attempt': 1,
    });
    // Nothing of ours records the query's token (the receiver's own SERVER span, in this process too, is a third party's).
    const ours = spans().filter((s) => s.kind !== SpanKind.SERVER || s.attributes['url.path'] !== '/hook');
    expect(JSON.stringify(ours.map((s) => s.attributes))).not.toContain('s3cret');
    // The receiver can continue the trace: it got the attempt span's context.
    const hit = ctx.received.find((r) => r.path === '/hook' && r.headers['x-service-delivery'] === delivery.id);
    expect(hit?.headers['traceparent']).toBe(`00-${traceId}-${client!.spanContext().spanId}-01`);
  });

  it('marks a failed attempt as an error span; the retry is another CLIENT span in the same trace', async () => {
    const { slug } = await formWithWebhook('/flaky');
    const res = await post(slug, '{"name":"Grace"}');
    const { id: submissionId } = (await res.json()) as { id: string };
    const delivery = await deliveryOf(submissionId);
    const [first, second] = await eventually(
      () => attemptSpans(delivery.id).length === 2 && attemptSpans(delivery.id),
      { message: 'two attempt spans' },
    );
    expect(first!.status.code).toBe(SpanStatusCode.ERROR);
    expect(first!.attributes).toMatchObject({
      'http.response.status_code': 500,
      'error.type': '500',
      'intake.webhook.attempt': 1,
      'intake.webhook.outcome': 'http_error',
    });
    expect(second!.status.code).toBe(SpanStatusCode.UNSET);
    expect(second!.attributes).toMatchObject({ 'http.response.status_code': 200, 'intake.webhook.attempt': 2 });
    expect(second!.spanContext().traceId).toBe(first!.spanContext().traceId);
  });
}

/** The metric catalog recorded where things happen, and the trace id on log lines. */
function metricAndLogCases(steps: Steps) {
  const { post, snapshot, deliveriesSettled, formWithWebhook } = steps;
  it('records the catalog metrics where things happen, with their outcome attributes', async () => {
    await deliveriesSettled();
    const before = await snapshot();
    const ok = await formWithWebhook('/hook', ['ops@example.com']);
    const flaky = await formWithWebhook('/flaky');
    const answers = await Promise.all([
      post(ok.slug, '{"name":"Ada"}'),
      post(flaky.slug, '{"name":"Grace"}'),
      post(ok.slug, '{"name":"Bot","_gotcha":"filled"}'),
      post('no-such-form', '{}'),
      post(ok.slug, '{"name":'),
    ]);
    expect(answers.map((r) => r.status)).toEqual([201, 201, 200, 404, 400]);
    const after = await eventually(
      async () => {
        const s = await snapshot();
        return (
          diff(s, before, 'intake.deliveries{outcome=succeeded}') === 2 &&
          diff(s, before, 'intake.notifications{outcome=sent}') === 1 &&
          s
        );
      },
      { message: 'both deliveries and the notification' },
    );
    const delta = (key: string) => diff(after, before, key);
    expect(delta('intake.submissions{outcome=received}')).toBe(2);
    expect(delta('intake.submissions{outcome=spam}')).toBe(1);
    expect(delta('intake.submissions{outcome=form-not-found}')).toBe(1);
    expect(delta('intake.submissions{outcome=bad-body}')).toBe(1);
    expect(delta('intake.ingest.duration{outcome=received}')).toBe(2); // histogram: the count
    // Attempts by outcome only: a label per webhook reached the SDK's series cap (the failing webhooks are a gauge).
    expect(delta('intake.delivery.attempts{outcome=success}')).toBe(2);
    expect(delta('intake.delivery.attempts{outcome=http_error}')).toBe(1);
    expect(delta('intake.delivery.latency{}')).toBe(2); // post → webhook, at each 2xx
    expect(delta('intake.delivery.attempt.duration{outcome=http_error}')).toBe(1);
    expect(delta('intake.delivery.retries{}')).toBe(1);
    expect(delta('intake.deliveries{outcome=failed}')).toBe(0);
  });

  it('puts the active trace id on every log line written inside a span, and none outside', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'intake-log-'));
    const fd = openSync(path.join(dir, 'log.jsonl'), 'w');
    const logger = createLogger({ level: 'info', service: 'test', destination: fd as 1 });
    const traceId = await trace.getTracer('test').startActiveSpan('work', async (span) => {
      logger.info('inside');
      await Promise.resolve();
      logger.warn({ detail: 1 }, 'still inside, after an await');
      span.end();
      return span.spanContext().traceId;
    });
    logger.info('outside');
    logger.flush();
    const read = () =>
      readFileSync(path.join(dir, 'log.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { msg: string; trace_id?: string });
    const lines = await eventually(() => read().length === 3 && read(), { message: 'three log lines written' });
    rmSync(dir, { recursive: true, force: true });
    expect(lines.map((l) => [l.msg, l.trace_id])).toEqual([
      ['inside', traceId],
      ['still inside, after an await', traceId],
      ['outside', undefined],
    ]);
  });
}

/** What no span attribute may carry: a request's query values, and a chat webhook's path (its secret). */
function redactionCases(ctx: Pipeline, steps: Steps) {
  it('keeps query values out of SERVER spans (a file link’s signature, a data subject’s e-mail)', async () => {
    const query = 'expires=1796771148&signature=SIGNATURESECRET&email=otlp-visitor%40probe.test';
    await (await fetch(`${ctx.ingestUrl}/v1/f/query-probe?${query}`)).arrayBuffer();
    const server = await eventually(
      () => steps.spans().find((s) => s.kind === SpanKind.SERVER && s.attributes['url.path'] === '/v1/f/query-probe'),
      { message: 'the SERVER span of the GET' },
    );
    expect(server.attributes['url.query']).toBe('expires=REDACTED&signature=REDACTED&email=REDACTED');
    const all = JSON.stringify(steps.spans().map((s) => [s.attributes, s.events, s.status]));
    expect(all).not.toContain('SIGNATURESECRET');
    expect(all).not.toContain('otlp-visitor');
  });

  it('keeps a chat webhook’s path, which is its secret, out of the CLIENT span’s url.full', async () => {
    const account = await factories.account(ctx.platform.db);
    const form = await factories.form(ctx.platform.db, account.id);
    const url = `${ctx.receiverUrl}/services/T000/B000/SLACKPATHSECRET`;
    await factories.webhook(ctx.platform, { accountId: account.id, formId: form.id, url, format: 'slack' });
    const res = await steps.post(form.slug, JSON.stringify({ name: 'Ada' }));
    const { id: submissionId } = (await res.json()) as { id: string };
    const delivery = await steps.deliveryOf(submissionId);
    const [client] = await eventually(
      () => steps.attemptSpans(delivery.id).length === 1 && steps.attemptSpans(delivery.id),
      { message: 'the attempt span' },
    );
    expect(client!.attributes['url.full']).toBe(`${ctx.receiverUrl}/REDACTED`);
    // The receiver's own SERVER span (in this process too) is a third party's: it knows its own path.
    const ours = steps
      .spans()
      .filter((s) => s.kind !== SpanKind.SERVER || !/^\/services\//.test(String(s.attributes['url.path'])));
    expect(JSON.stringify(ours.map((s) => [s.attributes, s.events, s.status]))).not.toContain('SLACKPATHSECRET');
  });
}

/**
 * The real ingest app, outbox relay and delivery workers in this process, with the SDK started
 * by telemetry.ts exporting to memory: one trace from the form post's HTTP SERVER span through
 * the relay's publish, the fan-out consumer, the delivery.requested publish and the send
 * consumer to the CLIENT span of the webhook attempt, whose traceparent the receiver gets.
 * And the metric catalog recorded where things happen, read with an in-memory reader.
 */
describe('telemetry: one trace from a form post to each webhook attempt', () => {
  const ctx = usePipelineWithTelemetry();
  const steps = pipelineSteps(ctx);

  describe('traces', () => traceCases(ctx, steps));
  describe('metrics and logs', () => metricAndLogCases(steps));
  // Last: the metrics above count this file's deliveries, which these would add to.
  describe('what traces keep out', () => redactionCases(ctx, steps));
});

import { SpanKind, trace } from '@opentelemetry/api';
import { tracing, metrics as sdkMetrics } from '@opentelemetry/sdk-node';
import { AckPolicy, DeliverPolicy } from 'nats';
import { recordSubmission, resetTelemetryForTests, startTelemetry } from '@intake/shared/telemetry';
import { ACK, ensureConsumer, enqueueEvent, runConsumer } from '@intake/shared/messaging';
import { requestDelivery } from '@intake/shared/webhooks';
import { observeBacklogs } from '@intake/shared/runtime';
import { createTestPlatform, eventually, type TestPlatform, startTestRelay } from '@intake/shared/testing';

/**
 * One trace from a request's span through enqueueEvent -> the outbox row -> the relay's PRODUCER
 * span -> NATS headers -> a runConsumer CONSUMER span, with the SDK started by telemetry.ts
 * exporting to memory, on the real Postgres and JetStream; and the metric catalog's instruments.
 */
/**
 * For the whole file: the SDK exporting spans and metrics to memory, a test platform with its relay,
 * and a consumer on the events stream that notes each event's id and the trace it ran in.
 */
function useTracedConsumer() {
  const exporter = new tracing.InMemorySpanExporter();
  const metricExporter = new sdkMetrics.InMemoryMetricExporter(sdkMetrics.AggregationTemporality.CUMULATIVE);
  const metricReader = new sdkMetrics.PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 3_600_000,
  });
  const ctx = {
    exporter,
    metricExporter,
    metricReader,
    platform: undefined as unknown as TestPlatform,
    stops: [] as (() => Promise<void> | void)[],
    handled: [] as { eventId: string; traceId: string }[],
  };

  beforeAll(async () => {
    const telemetry = startTelemetry({
      serviceName: 'intake-test',
      env: {},
      spanProcessors: [new tracing.SimpleSpanProcessor(exporter)],
      metricReaders: [metricReader],
    });
    expect(telemetry.enabled).toBe(true);
    const platform = (ctx.platform = await createTestPlatform());
    const relay = startTestRelay(platform);
    ctx.stops.push(() => relay.stop());
    const durable = 'trace_probe';
    await ensureConsumer(platform.nats, platform.nats.names.eventsStream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
    const consumer = runConsumer({
      nats: platform.nats,
      stream: platform.nats.names.eventsStream,
      durable,
      logger: platform.logger,
      concurrency: 4,
      handleBatch: (messages) =>
        messages.map(({ data, within }) => {
          ctx.handled.push({
            eventId: (data as { event_id: string }).event_id,
            traceId: within(() => trace.getActiveSpan()?.spanContext().traceId ?? ''),
          });
          return ACK;
        }),
    });
    ctx.stops.push(() => consumer.stop());
  });

  afterAll(async () => {
    for (const stop of ctx.stops.reverse()) await stop();
    await ctx.platform?.close();
    await resetTelemetryForTests();
  });

  return ctx;
}

/**
 * Enqueues an event inside the SERVER span the http instrumentation opens around a request in a
 * service (Jest loads http before any SDK can patch it; trace-export.test.ts covers that part in a
 * real process). Answers the event id, the span's ids and the outbox row's headers.
 */
function enqueueInRequestSpan(platform: TestPlatform) {
  const tracer = trace.getTracer('test');
  return tracer.startActiveSpan('POST /v1/f/:slug', { kind: SpanKind.SERVER }, async (span) => {
    try {
      const [id, headers] = await platform.db.transaction(async (trx) => {
        const written = await enqueueEvent(trx, { subject: 'submission.created', payload: { slug: 'contact' } });
        // Read in the writing transaction: once published, the relay removes the row.
        return [
          written,
          (await trx('outbox').where({ event_id: written }).first()).headers as Record<string, string>,
        ] as const;
      });
      return {
        eventId: id,
        traceId: span.spanContext().traceId,
        requestSpanId: span.spanContext().spanId,
        rowHeaders: headers,
      };
    } finally {
      span.end();
    }
  });
}

describe('telemetry: trace context across the outbox and JetStream', () => {
  const ctx = useTracedConsumer();
  const { exporter, metricExporter, metricReader, stops, handled } = ctx;

  it('runs one trace from the request to the consumer: outbox row, PRODUCER span, NATS headers, CONSUMER span', async () => {
    const { platform } = ctx;
    const { eventId, traceId, requestSpanId, rowHeaders } = await enqueueInRequestSpan(platform);
    const seen = await eventually(() => handled.find((h) => h.eventId === eventId), {
      message: 'the consumer to handle the event',
    });
    expect(seen.traceId).toBe(traceId);

    const spans = await eventually(() => {
      const all = exporter.getFinishedSpans();
      return all.some((s) => s.kind === SpanKind.CONSUMER && s.spanContext().traceId === traceId) ? all : undefined;
    });
    const producer = spans.find(
      (s) => s.kind === SpanKind.PRODUCER && s.attributes['messaging.message.id'] === eventId,
    );
    const consumer = spans.find((s) => s.kind === SpanKind.CONSUMER && s.spanContext().traceId === traceId);
    expect(producer?.spanContext().traceId).toBe(traceId);
    expect(producer?.parentSpanContext?.spanId).toBe(requestSpanId);
    expect(consumer?.parentSpanContext?.spanId).toBe(producer?.spanContext().spanId);
    // The outbox row carried the context (a W3C traceparent of the request's span).
    expect(rowHeaders.traceparent).toBe(`00-${traceId}-${requestSpanId}-01`);
  });

  it('marks the delivery PRODUCER span failed, with the exception, when the publish fails', async () => {
    const { platform } = ctx;
    // A subject no stream captures: JetStream has no responder and the publish throws.
    const nats = { ...platform.nats, names: { ...platform.nats.names, subject: (s: string) => `nostream-${s}` } };
    const deliveryId = `whd_${Date.now()}`;
    await expect(requestDelivery(nats, { deliveryId, trigger: 'schedule' })).rejects.toThrow();
    const span = exporter
      .getFinishedSpans()
      .find((s) => s.attributes['intake.webhook.delivery_id'] === deliveryId && s.kind === SpanKind.PRODUCER);
    expect(span?.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(span?.events.map((e) => e.name)).toContain('exception');
  });

  it('starts a new trace for an event written outside any request', async () => {
    const { platform } = ctx;
    const eventId = await platform.db.transaction((trx) =>
      enqueueEvent(trx, { subject: 'submission.created', payload: { slug: 'background' } }),
    );
    const seen = await eventually(() => handled.find((h) => h.eventId === eventId));
    const request = exporter
      .getFinishedSpans()
      .filter((s) => s.kind === SpanKind.SERVER)
      .map((s) => s.spanContext().traceId);
    expect(seen.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(request).not.toContain(seen.traceId);
  });

  it('exports the catalog metrics: submissions by outcome and the consumer backlog gauges', async () => {
    const { platform } = ctx;
    recordSubmission({ outcome: 'received', seconds: 0.02 });
    recordSubmission({ outcome: 'rate-limited', seconds: 0.001 });
    const stop = observeBacklogs({ nats: platform.nats, db: platform.db });
    stops.push(stop);
    await metricReader.forceFlush();
    const exported = metricExporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
    const byName = (name: string) =>
      exported
        .filter((m) => m.descriptor.name === name)
        .flatMap((m) => m.dataPoints as { attributes: Record<string, unknown>; value: unknown }[]);
    const submissions = byName('intake.submissions');
    expect(submissions.map((p) => [p.attributes['outcome'], p.value]).sort()).toEqual([
      ['rate-limited', 1],
      ['received', 1],
    ]);
    expect(byName('intake.ingest.duration')).toHaveLength(2);
    const pending = byName('intake.consumer.pending');
    expect(pending).toContainEqual(
      expect.objectContaining({
        attributes: { stream: platform.nats.names.eventsStream, consumer: 'trace_probe' },
        value: 0,
      }),
    );
    // Other test files share this worker's outbox table, so only the shape is certain here.
    expect(byName('intake.outbox.pending')).toEqual([expect.objectContaining({ value: expect.any(Number) })]);
    expect(byName('intake.outbox.lag')[0]?.value as number).toBeGreaterThanOrEqual(0);
  });
});

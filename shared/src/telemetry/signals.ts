import {
  metrics,
  ValueType,
  type Attributes,
  type Histogram,
  type Counter,
  type ObservableGauge,
  type Meter,
  type MeterProvider,
  SpanStatusCode,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import { PROBLEM_SLUGS, PROBLEMS, type ProblemSlug } from '../contracts/problems';

/**
 * What the code records for OpenTelemetry: its metric instruments (the catalog below) and its spans (`inActiveSpan`
 * and `failSpan`, at the end). The SDK that exports both is `sdk.ts`.
 */

/**
 * THE catalog of Intake's metric instruments: every metric any service records is created here,
 * once, with a stable name, unit and attribute set. Dashboards (deploy/grafana) and alerts use
 * these names; renaming one is a breaking change. Without a started SDK (telemetry off) the
 * OpenTelemetry API hands out no-op instruments, so recording is always safe and cheap.
 *
 * In Prometheus (through the collector) a name becomes `intake_<dots as underscores>`, plus
 * `_seconds` for unit `s` and `_total` for counters: see `prometheusName`.
 */
/** Latency buckets in seconds, from a fast local insert to a slow webhook receiver. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Post → webhook: seconds when all goes well, up to the retry ladder's hours when not. */
const DELIVERY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14_400];

export interface InstrumentSpec {
  name: string;
  kind: 'counter' | 'histogram' | 'gauge';
  unit: string;
  description: string;
  attributes: readonly string[];
}

/** Name, kind, unit and attributes of every instrument (used to create them, and by the dashboard test). */
export const METRICS = {
  submissions: {
    name: 'intake.submissions',
    kind: 'counter',
    unit: '{submission}',
    description: 'Form posts by outcome: received, spam, or the refusal problem slug',
    attributes: ['outcome'],
  },
  ingestDuration: {
    name: 'intake.ingest.duration',
    kind: 'histogram',
    unit: 's',
    description: 'Time to answer a form post, by outcome',
    attributes: ['outcome'],
  },
  outboxPending: {
    name: 'intake.outbox.pending',
    kind: 'gauge',
    unit: '{event}',
    description: 'Outbox events committed but not yet published to JetStream',
    attributes: [],
  },
  outboxLag: {
    name: 'intake.outbox.lag',
    kind: 'gauge',
    unit: 's',
    description: 'Age of the oldest unpublished outbox event (0 when none)',
    attributes: [],
  },
  outboxOversized: {
    name: 'intake.outbox.oversized',
    kind: 'counter',
    unit: '{event}',
    description:
      'Outbox events too large for a NATS message, by outcome: slimmed (published without the ' +
      'submission fields) or dropped (could not be published; alert on any)',
    attributes: ['outcome'],
  },
  deliveries: {
    name: 'intake.deliveries',
    kind: 'counter',
    unit: '{delivery}',
    description: 'Webhook deliveries finished, by outcome: succeeded or failed (retries exhausted or not retryable)',
    attributes: ['outcome'],
  },
  attempts: {
    name: 'intake.delivery.attempts',
    kind: 'counter',
    unit: '{attempt}',
    description: 'Webhook attempts by outcome: success, http_error, timeout, network_error, blocked',
    // No webhook id: one series per webhook never expires in a pod and reaches the SDK's 2,000-series cap, past which
    // attempts fold into an overflow series. Per webhook: `intake.webhooks.failing`, the console's health, the spans.
    attributes: ['outcome'],
  },
  attemptDuration: {
    name: 'intake.delivery.attempt.duration',
    kind: 'histogram',
    unit: 's',
    description: 'Time a webhook receiver took to answer one attempt, by outcome',
    attributes: ['outcome'],
  },
  retries: {
    name: 'intake.delivery.retries',
    kind: 'counter',
    unit: '{attempt}',
    description: 'Failed attempts scheduled for a retry',
    attributes: [],
  },
  deferred: {
    name: 'intake.delivery.deferred',
    kind: 'counter',
    unit: '{attempt}',
    description: 'Attempts deferred because their webhook or account had no free send slot (a slow receiver)',
    attributes: [],
  },
  deliveryLatency: {
    name: 'intake.delivery.latency',
    kind: 'histogram',
    unit: 's',
    description:
      "Post → webhook: from a submission's receipt (its id's time) to its receiver's 2xx answer, retries included",
    attributes: [],
  },
  consumerOldestAge: {
    name: 'intake.consumer.oldest_pending_age',
    kind: 'gauge',
    unit: 's',
    description: 'Age of the oldest message a JetStream consumer has not yet acknowledged (0 when none)',
    attributes: ['stream', 'consumer'],
  },
  notifications: {
    name: 'intake.notifications',
    kind: 'counter',
    unit: '{email}',
    description: 'Notification e-mails by outcome: sent or failed',
    attributes: ['outcome'],
  },
  consumerPending: {
    name: 'intake.consumer.pending',
    kind: 'gauge',
    unit: '{message}',
    description: 'Messages of a JetStream consumer not yet delivered',
    attributes: ['stream', 'consumer'],
  },
  streamBytes: {
    name: 'intake.stream.bytes',
    kind: 'gauge',
    unit: 'By',
    description: 'Bytes a JetStream stream of Intake holds (alert well before intake.stream.max_bytes)',
    attributes: ['stream'],
  },
  streamMaxBytes: {
    name: 'intake.stream.max_bytes',
    kind: 'gauge',
    unit: 'By',
    description: "The stream's size limit (NATS_STREAM_MAX_BYTES; -1: none); a full stream refuses new messages",
    attributes: ['stream'],
  },
  streamReplicas: {
    name: 'intake.stream.replicas',
    kind: 'gauge',
    unit: '{replica}',
    description: 'Replicas a JetStream stream of Intake is configured with (NATS_STREAM_REPLICAS)',
    attributes: ['stream'],
  },
  streamCurrentReplicas: {
    name: 'intake.stream.current_replicas',
    kind: 'gauge',
    unit: '{replica}',
    description:
      "A stream's replicas up to date, its leader among them (0: no leader, or its info did not come): at half of " +
      'intake.stream.replicas or fewer it has no quorum, takes no publish and delivers nothing',
    attributes: ['stream'],
  },
  streamOldestAge: {
    // Named with its unit (not unit 's'): Prometheus scrapes it under this name with no relabelling.
    name: 'intake.stream.oldest_age_seconds',
    kind: 'gauge',
    unit: '{second}',
    description:
      'Age of the oldest message a stream still holds: once a bounded events stream is full (or at its max_age), the ' +
      'window of events it keeps; a consumer whose oldest pending message nears it is about to lose events',
    attributes: ['stream'],
  },
  consumerAckPending: {
    name: 'intake.consumer.ack_pending',
    kind: 'gauge',
    unit: '{message}',
    description:
      'Messages delivered to a JetStream consumer and not yet acknowledged (in flight, deferred, or waiting a retry ' +
      'step of up to a minute; longer ones are parked in Postgres)',
    attributes: ['stream', 'consumer'],
  },
  consumerMaxAckPending: {
    name: 'intake.consumer.max_ack_pending',
    kind: 'gauge',
    unit: '{message}',
    description:
      "A JetStream consumer's max_ack_pending as NATS has it (SEND_MAX_ACK_PENDING, or a `nats consumer edit`): past " +
      'it the server hands out no more; alert on intake.consumer.ack_pending over it',
    attributes: ['stream', 'consumer'],
  },
  natsConnected: {
    name: 'intake.nats.connected',
    kind: 'gauge',
    unit: '1',
    description:
      'Whether this process is connected to NATS now (1) or not (0: down, unreachable, refused, closed); a process ' +
      'cut off publishes nothing and consumes nothing, its posts wait in the outbox',
    attributes: [],
  },
  purged: {
    name: 'intake.purge.submissions',
    kind: 'counter',
    unit: '{submission}',
    description:
      'Submissions the purge removed, by reason: retention, spam (spam retention), delivered (tombstoned after ' +
      'delivery) or request (a data-subject erasure)',
    attributes: ['reason'],
  },
  webhooksFailing: {
    name: 'intake.webhooks.failing',
    kind: 'gauge',
    unit: '{webhook}',
    description:
      'Enabled webhooks whose every attempt has failed for WEBHOOK_FAILURE_ALERT_AFTER or longer (their owners are ' +
      'mailed; the console shows which): a count from Postgres, the same on every delivery pod (alert on max)',
    attributes: [],
  },
  purgeLag: {
    name: 'intake.purge.lag',
    kind: 'gauge',
    unit: 's',
    description:
      'How long the oldest submission due for removal (retention, spam retention, the trash) has been due (0 when ' +
      'none): the purge is behind when it grows; the same on every management pod (alert on max)',
    attributes: [],
  },
  purgeFailures: {
    name: 'intake.purge.failures',
    kind: 'counter',
    unit: '{batch}',
    description: 'Purge batches left for the next run, by stage: files (object storage refused) or rows',
    attributes: ['stage'],
  },
} as const satisfies Record<string, InstrumentSpec>;

/**
 * The Prometheus series name the OpenTelemetry collector's prometheus exporter gives an instrument (histograms add
 * _bucket/_sum/_count).
 */
export function prometheusName(spec: InstrumentSpec): string {
  let name = spec.name.replace(/\./g, '_');
  if (spec.unit === 's') name += '_seconds';
  if (spec.kind === 'counter') name += '_total';
  return name;
}

function createInstruments(meter: Meter) {
  const counter = (s: InstrumentSpec): Counter =>
    meter.createCounter(s.name, { unit: s.unit, description: s.description, valueType: ValueType.INT });
  const histogram = (s: InstrumentSpec): Histogram =>
    meter.createHistogram(s.name, {
      unit: s.unit,
      description: s.description,
      advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
    });
  const gauge = (s: InstrumentSpec): ObservableGauge =>
    meter.createObservableGauge(s.name, { unit: s.unit, description: s.description });
  return {
    meter,
    submissions: counter(METRICS.submissions),
    ingestDuration: histogram(METRICS.ingestDuration),
    deliveries: counter(METRICS.deliveries),
    attempts: counter(METRICS.attempts),
    attemptDuration: histogram(METRICS.attemptDuration),
    retries: counter(METRICS.retries),
    deliveryLatency: meter.createHistogram(METRICS.deliveryLatency.name, {
      unit: METRICS.deliveryLatency.unit,
      description: METRICS.deliveryLatency.description,
      advice: { explicitBucketBoundaries: DELIVERY_BUCKETS },
    }),
    consumerOldestAge: gauge(METRICS.consumerOldestAge),
    deferred: counter(METRICS.deferred),
    notifications: counter(METRICS.notifications),
    outboxPending: gauge(METRICS.outboxPending),
    outboxLag: gauge(METRICS.outboxLag),
    outboxOversized: counter(METRICS.outboxOversized),
    consumerPending: gauge(METRICS.consumerPending),
    consumerAckPending: gauge(METRICS.consumerAckPending),
    consumerMaxAckPending: gauge(METRICS.consumerMaxAckPending),
    natsConnected: gauge(METRICS.natsConnected),
    streamBytes: gauge(METRICS.streamBytes),
    streamMaxBytes: gauge(METRICS.streamMaxBytes),
    streamReplicas: gauge(METRICS.streamReplicas),
    streamCurrentReplicas: gauge(METRICS.streamCurrentReplicas),
    streamOldestAge: gauge(METRICS.streamOldestAge),
    purged: counter(METRICS.purged),
    purgeFailures: counter(METRICS.purgeFailures),
    webhooksFailing: gauge(METRICS.webhooksFailing),
    purgeLag: gauge(METRICS.purgeLag),
  };
}

export type Instruments = ReturnType<typeof createInstruments>;
let cached: { provider: MeterProvider; instruments: Instruments } | undefined;

/**
 * The instruments, created on the meter of the provider registered now. The metrics API has no
 * proxy provider (unlike traces), so instruments made before the SDK started would stay no-ops:
 * this follows the registered provider. Prefer the record* helpers, which fix the attribute names.
 */
export function instruments(): Instruments {
  const provider = metrics.getMeterProvider();
  if (cached?.provider !== provider) cached = { provider, instruments: createInstruments(provider.getMeter('intake')) };
  return cached.instruments;
}

export type SubmissionOutcome = 'received' | 'spam' | ProblemSlug;
export type AttemptOutcome = 'success' | 'http_error' | 'timeout' | 'network_error' | 'blocked';

/** Ingest: one form post answered (`received`, `spam`, or the slug of the problem it was refused with). */
export function recordSubmission(props: { outcome: SubmissionOutcome; seconds: number }): void {
  const attrs: Attributes = { outcome: props.outcome };
  instruments().submissions.add(1, attrs);
  instruments().ingestDuration.record(props.seconds, attrs);
}

/** Delivery: one webhook attempt made; `willRetry` when the failure is scheduled for another attempt. */
export function recordAttempt(props: {
  outcome: AttemptOutcome;
  seconds: number;
  willRetry: boolean;
  /**
   * The webhook attempted: not a label (unbounded, see METRICS.attempts); the attempt's span carries it
   * (`intake.webhook.id`), and `intake.webhooks.failing` counts the webhooks failing.
   */
  webhookId?: string;
}): void {
  const i = instruments();
  i.attempts.add(1, { outcome: props.outcome });
  i.attemptDuration.record(props.seconds, { outcome: props.outcome });
  if (props.willRetry) i.retries.add(1);
}

/** Delivery: a submission's webhook answered 2xx, `seconds` after the submission was received. */
export function recordDeliveryLatency(seconds: number): void {
  instruments().deliveryLatency.record(Math.max(0, seconds));
}

/** Delivery: an attempt was deferred for want of a send slot of its webhook or account. */
export function recordDeferred(): void {
  instruments().deferred.add(1);
}

/** Delivery: a delivery reached its final state. */
export function recordDelivery(props: { outcome: 'succeeded' | 'failed' }): void {
  instruments().deliveries.add(1, { outcome: props.outcome });
}

/**
 * Adds 0 to a counter for each attribute set it is known to be recorded with, so that its series exist from the start:
 * `increase()`/`rate()` see the first event (a series that appears at 1 has no earlier sample to grow from). Call it
 * where the recording starts (the SDK is started by then).
 */
function zeroInitialise(counter: Counter, sets: readonly Attributes[]): void {
  for (const attrs of sets) counter.add(0, attrs);
}

/** Outbox relay started: its oversized-event counter at 0 for both outcomes. */
export function zeroOversizedEvents(): void {
  zeroInitialise(instruments().outboxOversized, [{ outcome: 'slimmed' }, { outcome: 'dropped' }]);
}

/**
 * Ingest started: its submissions counter at 0 for `received`, `spam` and the slugs answered 5xx (an outage's first
 * error counts). Not every 4xx slug: they are many, and a refusal's first one matters little.
 */
export function zeroSubmissionOutcomes(): void {
  const failures = PROBLEM_SLUGS.filter((slug) => PROBLEMS[slug].status >= 500);
  zeroInitialise(
    instruments().submissions,
    ['received', 'spam', ...failures].map((outcome) => ({ outcome })),
  );
}

/** Purge started: its failure counter at 0 for both stages. */
export function zeroPurgeFailures(): void {
  zeroInitialise(instruments().purgeFailures, [{ stage: 'files' }, { stage: 'rows' }]);
}

/** Outbox relay: an event too large for a NATS message was published without its fields, or dropped. */
export function recordOversizedEvent(props: { outcome: 'slimmed' | 'dropped' }): void {
  instruments().outboxOversized.add(1, { outcome: props.outcome });
}

export function recordNotification(props: { outcome: 'sent' | 'failed' }): void {
  instruments().notifications.add(1, { outcome: props.outcome });
}

export type PurgeReason = 'retention' | 'spam' | 'delivered' | 'trash' | 'request';

/** Management's purge: `count` submissions removed (or tombstoned) for `reason`. */
export function recordPurged(props: { reason: PurgeReason; count: number }): void {
  if (props.count > 0) instruments().purged.add(props.count, { reason: props.reason });
}

/** Management's purge: a batch left for the next run because its files or its rows could not be removed. */
export function recordPurgeFailure(props: { stage: 'files' | 'rows' }): void {
  instruments().purgeFailures.add(1, { stage: props.stage });
}

// Spans.

/** Marks a span failed: the error recorded as an exception event, the status ERROR. */
export function failSpan(span: Span, err: unknown): void {
  span.recordException(err as Error);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** Runs `fn` in a new active span that ends when `fn` settles; a throw marks the span failed and goes on up. */
export function inActiveSpan<T>(
  tracer: Tracer,
  name: string,
  options: SpanOptions,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, options, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

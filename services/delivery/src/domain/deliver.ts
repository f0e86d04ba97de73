import type { Agent } from 'undici';
import { SpanKind, trace } from '@opentelemetry/api';
import {
  ACK,
  newId,
  toNatsHeaders,
  currentTraceHeaders,
  recordAttempt,
  recordDelivery,
  SUBJECTS,
  type Config,
  type Db,
  type DeliveryRequested,
  type Nats,
  type Outcome,
  type SecretBox,
} from '@intake/shared';
import { deliveryRepository, type DeliveryStatus, type DeliveryTarget } from '../repositories/delivery.repository';
import { leaseDelivery } from '../repositories/lease.repository';
import { sendWebhook, type AttemptResult } from './sender';

/** The spec's maximum: the first attempt and four retries. */
export const MAX_ATTEMPTS = 5;

/** The wait after failed attempt `n` (1-based); a schedule shorter than the ladder repeats its last step. */
export function retryDelayMs(schedule: readonly number[], attempt: number): number {
  return schedule[Math.min(attempt - 1, schedule.length - 1)] ?? 1000;
}

const tracer = trace.getTracer('intake-delivery');

/**
 * Publishes one `delivery.requested` inside a PRODUCER span whose context rides in the NATS
 * headers, so the send consumer continues the trace. The msgID deduplicates a republished
 * initial request; a replay gets a fresh one.
 */
export async function requestDelivery(
  nats: Nats,
  props: { deliveryId: string; trigger: DeliveryRequested['trigger'] },
): Promise<void> {
  const eventId = props.trigger === 'schedule' ? `${props.deliveryId}.initial` : newId('event');
  const message: DeliveryRequested = { event_id: eventId, delivery_id: props.deliveryId, trigger: props.trigger };
  const subject = nats.names.subject(SUBJECTS.deliveryRequested);
  const attributes = {
    'messaging.system': 'nats',
    'messaging.destination.name': subject,
    'messaging.message.id': eventId,
    'intake.webhook.delivery_id': props.deliveryId,
  };
  await tracer.startActiveSpan(`${subject} publish`, { kind: SpanKind.PRODUCER, attributes }, async (span) => {
    try {
      await nats.js.publish(subject, JSON.stringify(message), {
        msgID: eventId,
        headers: toNatsHeaders(currentTraceHeaders()),
        timeout: 5000,
      });
    } finally {
      span.end();
    }
  });
}

/**
 * How long one attempt holds its delivery (see leaseDelivery): the attempt's timeout plus as much
 * again to record it; the same as the send consumer's ack deadline, so a copy redelivered after
 * a crash finds the lease expired.
 */
export function attemptLeaseMs(timeoutMs: number): number {
  return Math.max(2 * timeoutMs, 2000);
}

/**
 * Takes the delivery's lease for the attempt about to be made. A copy of the message handled
 * while another process makes the attempt (or after it recorded one) is not sent: it comes back
 * when that lease ends, and the state recorded then decides.
 */
async function leaseOrWait(deps: DeliverDeps, target: DeliveryTarget): Promise<Outcome | undefined> {
  const lease = await leaseDelivery(deps.db, {
    id: target.id,
    attemptCount: target.attempt_count,
    leaseMs: attemptLeaseMs(deps.config.WEBHOOK_TIMEOUT_MS),
  });
  return lease.taken ? undefined : { retryInMs: Math.max(lease.remainingMs, 50) };
}

export interface DeliverDeps {
  db: Db;
  secrets: SecretBox;
  agent: Agent;
  config: Pick<Config, 'WEBHOOK_RETRY_SCHEDULE' | 'WEBHOOK_TIMEOUT_MS' | 'WEBHOOK_ALLOW_PRIVATE_NETWORKS'>;
  now(): Date;
}

function attempt(deps: DeliverDeps, target: DeliveryTarget, attemptNumber: number): Promise<AttemptResult> {
  return sendWebhook({
    agent: deps.agent,
    url: target.url,
    webhookId: target.webhook_id,
    allowPrivateNetworks: deps.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
    type: target.event_type,
    deliveryId: target.id,
    data: target.data,
    attempt: attemptNumber,
    secret: deps.secrets.open(target.sealed_secret),
    now: deps.now(),
  });
}

/**
 * Handles one `delivery.requested`. The state in Postgres decides, so duplicates and stale
 * messages are harmless. A scheduled attempt is numbered from the attempts recorded (an attempt
 * cut short by a crash was never recorded, so it is simply made again); a failure is retried by
 * JetStream redelivery after the ladder's step, the fifth failure marks the delivery `failed`.
 * A replay is one extra attempt outside the ladder (see the README).
 */
export async function processDeliveryRequest(deps: DeliverDeps, request: DeliveryRequested): Promise<Outcome> {
  const { db } = deps;
  const target = await deliveryRepository.target(db, request.delivery_id);
  if (!target) return ACK; // the webhook (and its deliveries) was deleted
  // A disabled webhook is never called: a replay queued before it was disabled is dropped, a
  // scheduled delivery still waiting ends `failed`.
  if (!target.enabled) {
    if (request.trigger === 'replay' || target.status === 'succeeded' || target.status === 'failed') return ACK;
    await deliveryRepository.setStatus(
      db,
      target.id,
      'failed',
      'the webhook was disabled before this delivery completed',
      deps.now(),
    );
    recordDelivery({ outcome: 'failed' });
    return ACK;
  }
  if (request.trigger === 'replay') {
    const number = Math.min(target.attempt_count + 1, MAX_ATTEMPTS);
    const busy = await leaseOrWait(deps, target);
    if (busy) return busy;
    const result = await attempt(deps, target, number);
    const status: DeliveryStatus = result.ok ? 'succeeded' : target.status;
    await deliveryRepository.recordAttempt(db, {
      deliveryId: target.id,
      attempt: number,
      trigger: 'replay',
      result,
      status,
      nextAttemptAt: result.ok ? null : target.next_attempt_at,
      now: deps.now(),
    });
    recordAttempt({ outcome: result.outcome, seconds: result.durationMs / 1000, willRetry: false });
    if (result.ok && target.status !== 'succeeded') recordDelivery({ outcome: 'succeeded' });
    return ACK;
  }
  if (target.status === 'succeeded' || target.status === 'failed') return ACK;
  const number = target.scheduled_attempts + 1;
  if (number > MAX_ATTEMPTS) {
    await deliveryRepository.setStatus(db, target.id, 'failed', target.last_error, deps.now());
    recordDelivery({ outcome: 'failed' });
    return ACK;
  }
  const early = target.next_attempt_at ? target.next_attempt_at.getTime() - deps.now().getTime() : 0;
  if (early > 20) return { retryInMs: early }; // redelivered before its step (e.g. after a crash): wait for it
  const busy = await leaseOrWait(deps, target);
  if (busy) return busy;
  const result = await attempt(deps, target, number);
  const now = deps.now();
  if (result.ok || number >= MAX_ATTEMPTS) {
    await deliveryRepository.recordAttempt(db, {
      deliveryId: target.id,
      attempt: number,
      trigger: 'schedule',
      result,
      status: result.ok ? 'succeeded' : 'failed',
      nextAttemptAt: null,
      now,
    });
    recordAttempt({ outcome: result.outcome, seconds: result.durationMs / 1000, willRetry: false });
    recordDelivery({ outcome: result.ok ? 'succeeded' : 'failed' });
    return ACK;
  }
  const delay = retryDelayMs(deps.config.WEBHOOK_RETRY_SCHEDULE, number);
  await deliveryRepository.recordAttempt(db, {
    deliveryId: target.id,
    attempt: number,
    trigger: 'schedule',
    result,
    status: 'retrying',
    nextAttemptAt: new Date(now.getTime() + delay),
    now,
  });
  recordAttempt({ outcome: result.outcome, seconds: result.durationMs / 1000, willRetry: true });
  return { retryInMs: delay };
}

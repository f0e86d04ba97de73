import type { Agent } from 'undici';
import {
  ACK,
  recordAttempt,
  recordDelivery,
  recordDeliveryAttempt,
  sendWebhook,
  type AttemptResult,
  type Config,
  type Db,
  type DeliveryRequested,
  type DeliveryStatus,
  type Outcome,
  type SecretBox,
  tickBatcher,
  type AttemptRecord,
} from '@intake/shared';
import { updateDeliveryStatus, type DeliveryTarget } from '../repositories/delivery.repository';
import {
  claimDeliveries,
  recordDeliveryAttempts,
  releaseDeliveryLease,
  type ClaimAsk,
  type DeliveryClaim,
} from '../repositories/send-batch.repository';

/** The spec's maximum: the first attempt and four retries. */
export const MAX_ATTEMPTS = 5;

/** The wait after failed attempt `n` (1-based); a schedule shorter than the ladder repeats its last step. */
export function retryDelayMs(schedule: readonly number[], attempt: number): number {
  return schedule[Math.min(attempt - 1, schedule.length - 1)] ?? 1000;
}

/**
 * How long one attempt holds its delivery (see leaseDelivery): the attempt's timeout plus as much
 * again to record it; the same as the send consumer's ack deadline, so a copy redelivered after
 * a crash finds the lease expired.
 */
export function attemptLeaseMs(timeoutMs: number): number {
  return Math.max(2 * timeoutMs, 2000);
}

/** A copy of the message handled while another process makes the attempt comes back when that lease ends. */
function waitFor(lease: { remainingMs: number }): Outcome {
  return { retryInMs: Math.max(lease.remainingMs, 50) };
}

/** The send path's statements: the delivery read and its lease taken, a lease given back, the attempt recorded. */
export interface DeliveryStore {
  claim(ask: ClaimAsk): Promise<DeliveryClaim>;
  release(id: string): Promise<void>;
  record(props: AttemptRecord): Promise<void>;
}

/** One statement per call. */
export function directDeliveryStore(db: Db): DeliveryStore {
  return {
    claim: async (ask) => (await claimDeliveries(db, [ask], MAX_ATTEMPTS))[0]!,
    release: (id) => releaseDeliveryLease(db, id),
    record: (props) => recordDeliveryAttempt(db, props),
  };
}

/**
 * The calls of the messages handled within a millisecond share one statement each (the send
 * consumer holds up to 64 at once); a batch of records that fails is retried one by one, so an
 * attempt is never left unrecorded because of another.
 */
export function batchedDeliveryStore(db: Db): DeliveryStore {
  const direct = directDeliveryStore(db);
  return {
    claim: tickBatcher({ waitMs: 1, run: (asks: ClaimAsk[]) => claimDeliveries(db, asks, MAX_ATTEMPTS) }),
    release: direct.release,
    record: tickBatcher({
      waitMs: 1,
      run: async (records: AttemptRecord[]) => {
        await recordDeliveryAttempts(db, records);
        return records.map(() => undefined);
      },
      single: (record) => direct.record(record),
    }),
  };
}

function storeOf(deps: DeliverDeps): DeliveryStore {
  return deps.store ?? directDeliveryStore(deps.db);
}

export interface DeliverDeps {
  /** Default: one query per call (directDeliveryStore). */
  store?: DeliveryStore;
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
  const store = storeOf(deps);
  // The delivery is read and, when an attempt may be made, leased in the same statement.
  const { target, lease } = await store.claim({
    id: request.delivery_id,
    trigger: request.trigger,
    leaseMs: attemptLeaseMs(deps.config.WEBHOOK_TIMEOUT_MS),
  });
  if (!target) return ACK; // the webhook (and its deliveries) was deleted
  // A disabled webhook is never called: a replay queued before it was disabled is dropped, a
  // scheduled delivery still waiting ends `failed`.
  if (!target.enabled) {
    if (request.trigger === 'replay' || target.status === 'succeeded' || target.status === 'failed') return ACK;
    await updateDeliveryStatus(db, {
      deliveryId: target.id,
      status: 'failed',
      lastError: 'the webhook was disabled before this delivery completed',
      now: deps.now(),
    });
    recordDelivery({ outcome: 'failed' });
    return ACK;
  }
  if (request.trigger === 'replay') {
    const number = Math.min(target.attempt_count + 1, MAX_ATTEMPTS);
    if (!lease.taken) return waitFor(lease);
    const result = await attempt(deps, target, number);
    const status: DeliveryStatus = result.ok ? 'succeeded' : target.status;
    await store.record({
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
    await updateDeliveryStatus(db, {
      deliveryId: target.id,
      status: 'failed',
      lastError: target.last_error,
      now: deps.now(),
    });
    recordDelivery({ outcome: 'failed' });
    return ACK;
  }
  const early = target.next_attempt_at ? target.next_attempt_at.getTime() - deps.now().getTime() : 0;
  if (early > 20) {
    // Redelivered before its step (e.g. after a crash): wait for it, leaving the delivery to whoever comes then.
    if (lease.taken) await store.release(target.id);
    return { retryInMs: early };
  }
  if (!lease.taken) return waitFor(lease);
  const result = await attempt(deps, target, number);
  const now = deps.now();
  if (result.ok || number >= MAX_ATTEMPTS) {
    await store.record({
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
  await store.record({
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

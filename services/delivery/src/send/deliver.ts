import { setTimeout as sleep } from 'node:timers/promises';
import { BatchQueue, type Config, type Db, type SecretBox, type Logger, recordGroupOrEach } from '@intake/shared/base';
import { receivedAt, type DeliveryRequested } from '@intake/shared/contracts';
import { recordAttempt, recordDeferred, recordDelivery, recordDeliveryLatency } from '@intake/shared/telemetry';
import { ACK, type Outcome, type Within } from '@intake/shared/messaging';
import { isChatFormat, isIntegration } from '@intake/shared/webhooks';
import { type Worker } from '@intake/shared/runtime';
import { sendToIntegration, type IntegrationApis } from '../integrations';
import { HealthTally } from '../domain/health-tally';
import { parkDeliveries } from '../repositories/parking.repository';
import { sendWebhook, type AttemptResult, type WebhookAgent } from './attempt';
import {
  claimDeliveries,
  releaseDeliveryLease,
  type ClaimAsk,
  type DeliveryClaim,
  type Lease,
} from './claim.repository';
import { updateDeliveryStatus, type DeliveryTarget } from './delivery.repository';
import { LeaseKeeper } from './lease-keeper';
import { attemptRecorded, recordDeliveryAttempts, type AttemptRecord } from './record.repository';
import type { Deferral, SendSlots, SlotTarget } from './slots';

/*
 * The send path, phase by phase (this folder): parse.ts (a message of the send consumer is a `delivery.requested`, or
 * is dropped) → slots.ts (a send slot for its account and webhook, or it waits) → claim.repository.ts (the delivery
 * read with its webhook and leased, one statement for the batch; lease-keeper.ts keeps the leases of slow attempts) →
 * attempt.ts (the signed POST; an integration's write goes through ../integrations) → record.repository.ts (the
 * attempt and the delivery's new state). This file runs them and decides what comes next: done, the retry ladder's
 * step, or parked. test-ping.ts makes the owner's test ping through the same phases.
 */

/** The spec's maximum: the first attempt and four retries. */
export const MAX_ATTEMPTS = 5;

/**
 * A retry that waits longer than this is parked in Postgres (migration 025) and its message acknowledged, instead of
 * waiting in JetStream as a nak with a delay, where it would count toward the consumer's `max_ack_pending`.
 */
export const PARK_AFTER_MS = 60_000;

/** The most a retry waits past its step, as a share of the step (RETRY_JITTER × step). */
export const RETRY_JITTER = 0.1;

/**
 * The wait after failed attempt `n` (1-based): the schedule's step (a schedule shorter than the ladder repeats its last
 * step), plus up to a tenth of it at random. Never earlier than the step the spec gives; the jitter spreads the retries
 * of the many deliveries one outage failed at once, so a receiver coming back is not met by all of them in one second.
 */
export function retryDelayMs(schedule: readonly number[], attempt: number, random: () => number = Math.random): number {
  const step = schedule[Math.min(attempt - 1, schedule.length - 1)] ?? 1000;
  return step + Math.floor(step * RETRY_JITTER * random());
}

/**
 * How long one attempt holds its delivery (see claimDeliveries): the attempt's timeout plus as much
 * again to record it; the same as the send consumer's ack deadline, so a copy redelivered after
 * a crash finds the lease expired.
 */
export function attemptLeaseMs(timeoutMs: number): number {
  return Math.max(2 * timeoutMs, 2000);
}

/** A copy of the message handled while another process makes the attempt comes back when that lease ends. */
function waitFor(lease: Lease): Outcome {
  return { retryInMs: Math.max(lease.taken ? 0 : lease.remainingMs, 50) };
}

/**
 * The send path's statements: the deliveries read and their leases taken, a lease given back, an attempt recorded, a
 * delivery parked until its next attempt.
 */
export interface DeliveryStore {
  /** How long a claim leases a delivery for its attempt (attemptLeaseMs); extended while the attempt runs. */
  readonly leaseMs: number;
  /** Claims deliveries (see claimDeliveries); a lease taken is kept while its attempt runs, until `done`. */
  claim(asks: ClaimAsk[]): Promise<DeliveryClaim[]>;
  /** The claim of `id` is over, its attempt recorded or not made: its lease is no longer kept. */
  done(id: string): void;
  release(id: string): Promise<void>;
  /** Records an attempt at `webhookId`, and tallies it in the webhook's health once recorded. */
  record(record: AttemptRecord, webhookId: string): Promise<void>;
  /** Parks deliveries until their next attempt, in one statement. */
  park(parked: { id: string; dueAt: Date }[]): Promise<void>;
  /** Writes the health tallied so far (and on stop, what is left). */
  health: HealthTally;
  /** Writes the health every second and keeps the leases of attempts in flight, until stopped. */
  start(logger: Logger): Worker;
}

/**
 * The send path's store, one per process: the deliveries of a batch of requests are claimed in one
 * statement; attempts end one at a time, so their records go through a BatchQueue (those that end
 * while a record is written share the next statement). A group of records that fails is recorded
 * one by one, so an attempt is never left unrecorded because of another.
 */
export function deliveryStore(db: Db, leaseMs: number): DeliveryStore {
  const health = new HealthTally(db);
  const leases = new LeaseKeeper(db, leaseMs);
  const records = new BatchQueue<AttemptRecord, void>(
    (group) => recordGroupOrEach(group, (some) => recordDeliveryAttempts(db, some)),
    // One write in flight, a second only once the first has run 20 ms (a lock, a slow disk): records that end
    // meanwhile share the next statement, one commit for many (four at once made a statement of nearly every record
    // and doubled the Postgres time of the send path in the all-in-one).
    { maxGroup: 64, maxInFlight: 2, spareAfterMs: 20 },
  );
  return {
    leaseMs,
    claim: async (asks) => {
      const sent = performance.now();
      const claims = await claimDeliveries(db, asks, MAX_ATTEMPTS);
      claims.forEach((claim, i) => claim.lease.taken && leases.hold(asks[i]!.id, sent));
      return claims;
    },
    done: (id) => leases.done(id),
    release: (id) => releaseDeliveryLease(db, id),
    record: async (record, webhookId) => {
      await records.push(record);
      health.add(webhookId, record.result.startedAt, record.result.ok);
    },
    park: (parked) => parkDeliveries(db, parked),
    health,
    start(logger) {
      const workers = [health.start(logger), leases.start(logger)];
      return { stop: async () => void (await Promise.all(workers.map((w) => w.stop()))) };
    },
  };
}

export interface DeliverDeps {
  store: DeliveryStore;
  /** Who may make an attempt now (per webhook and per account). */
  slots: SendSlots;
  db: Db;
  secrets: SecretBox;
  agent: WebhookAgent;
  config: Pick<
    Config,
    'WEBHOOK_RETRY_SCHEDULE' | 'WEBHOOK_TIMEOUT_MS' | 'WEBHOOK_ALLOW_PRIVATE_NETWORKS' | 'PUBLIC_BASE_URL'
  > &
    IntegrationApis;
  now(): Date;
}

/** A `delivery.requested` to handle, and (from the consumer) the trace its attempt joins. */
export interface RequestToSend {
  request: DeliveryRequested;
  within?: Within;
}

/**
 * Handles `delivery.requested` messages: those whose webhook has no free send slot are deferred (or, a broken
 * webhook's, parked in one statement) before any is read; one statement claims the others' deliveries (reads each with
 * its webhook and takes its lease when an attempt may be made), then each goes on alone and answers
 * its own outcome when done, so a slow receiver holds up only its own message. The state in Postgres
 * decides, so duplicates and stale messages are harmless. A scheduled attempt is numbered from the
 * attempts recorded (an attempt cut short by a crash was never recorded, so it is simply made
 * again); a failure is retried by JetStream redelivery after the ladder's step (a step over
 * PARK_AFTER_MS parked in Postgres and asked for again when due), the fifth failure marks the
 * delivery `failed`. A replay is one extra attempt outside the ladder (docs/decisions/delivery.md#replay-test-ping-and-the-log).
 */
export async function processDeliveryRequests(deps: DeliverDeps, items: RequestToSend[]): Promise<Promise<Outcome>[]> {
  if (items.length === 0) return [];
  // Whether each attempt may start, decided before any statement by the webhook and account its request names (or
  // those remembered from its last deferral): no free slot defers it in JetStream, a broken webhook parks it.
  const waits = items.map(({ request }) =>
    deps.slots.beforeClaim(request.delivery_id, namedTarget(request), { probe: request.trigger === 'replay' }),
  );
  const parked = await parkBeforeClaim(deps, items, waits);
  const notNow = (i: number): boolean => waits[i] !== undefined && (!waits[i]!.broken || parked);
  const toClaim = items.filter((_, i) => !notNow(i));
  const leaseMs = deps.store.leaseMs;
  const claims =
    toClaim.length === 0
      ? []
      : await deps.store.claim(
          toClaim.map(({ request }) => ({ id: request.delivery_id, trigger: request.trigger, leaseMs })),
        );
  let k = 0;
  return items.map(({ request, within = (work) => work() }, i) => {
    const wait = waits[i];
    if (notNow(i)) {
      recordDeferred();
      return Promise.resolve(wait!.broken ? ACK : { retryInMs: wait!.deferMs });
    }
    const claim = claims[k++]!;
    return within(() => deliverClaimed(deps, request, claim)).finally(() => deps.store.done(request.delivery_id));
  });
}

/** The webhook and account a request names (see DeliveryRequested), when it names them. */
function namedTarget(request: DeliveryRequested): SlotTarget | undefined {
  return request.webhook_id && request.account_id
    ? { webhookId: request.webhook_id, accountId: request.account_id }
    : undefined;
}

/**
 * Parks the deliveries of a broken webhook until about its next probe, all in one statement, before any is read; false
 * when that statement failed, and they go through the claim like the others (which parks each after reading it).
 */
async function parkBeforeClaim(
  deps: DeliverDeps,
  items: RequestToSend[],
  waits: (Deferral | undefined)[],
): Promise<boolean> {
  const now = deps.now().getTime();
  const parked = items.flatMap(({ request }, i) => {
    const wait = waits[i];
    return wait?.broken ? [{ id: request.delivery_id, dueAt: new Date(now + wait.deferMs) }] : [];
  });
  if (parked.length === 0) return true;
  return deps.store.park(parked).then(
    () => true,
    () => false,
  );
}

/** What happens to one claimed delivery: by the state of its webhook, then by what triggered the request. */
async function deliverClaimed(deps: DeliverDeps, request: DeliveryRequested, claim: DeliveryClaim): Promise<Outcome> {
  const { target, lease } = claim;
  if (!target) return ACK; // the webhook (and its deliveries) was deleted
  if (!target.enabled) return closeDisabled(deps, request, target);
  if (request.trigger === 'replay') return replay(deps, target, lease);
  return scheduled(deps, target, lease);
}

/** An attempt not made now: deferred in JetStream (`retryInMs`), or parked (`ack`). */
type NotNow = { retryInMs: number } | typeof ACK;

const madeNow = (result: AttemptResult | NotNow): result is AttemptResult =>
  !('retryInMs' in result || 'ack' in result);

/**
 * One attempt in a send slot of the delivery's webhook and account (SendSlots), held while the receiver has it; when
 * none is free the lease is given back and the message deferred, so it waits in JetStream, not in a slot.
 */
async function attemptInSlot(
  deps: DeliverDeps,
  target: DeliveryTarget,
  number: number,
  options: { probe?: boolean } = {},
): Promise<AttemptResult | NotNow> {
  const slot = deps.slots.take({ accountId: target.account_id, webhookId: target.webhook_id }, target.id, options);
  if (!('release' in slot)) {
    await deps.store.release(target.id);
    recordDeferred();
    if (!slot.broken) return { retryInMs: slot.deferMs };
    // Its webhook is broken: the delivery waits in Postgres for the next probe, not in JetStream (SendSlots, BREAK).
    await deps.store.park([{ id: target.id, dueAt: new Date(deps.now().getTime() + slot.deferMs) }]);
    return ACK;
  }
  let result: AttemptResult | undefined;
  try {
    result = await attempt(deps, target, number);
    return result;
  } finally {
    slot.release(result?.ok);
  }
}

/**
 * A disabled webhook is never called: a replay queued before it was disabled is dropped, a
 * scheduled delivery still waiting ends `failed`.
 */
async function closeDisabled(deps: DeliverDeps, request: DeliveryRequested, target: DeliveryTarget): Promise<Outcome> {
  if (request.trigger === 'replay' || target.status === 'succeeded' || target.status === 'failed') return ACK;
  await endFailed(deps, target, 'the webhook was disabled before this delivery completed');
  return ACK;
}

/** Marks a delivery `failed` without an attempt. */
async function endFailed(deps: DeliverDeps, target: DeliveryTarget, lastError: string | null): Promise<void> {
  await updateDeliveryStatus(deps.db, { deliveryId: target.id, status: 'failed', lastError, now: deps.now() });
  recordDelivery({ outcome: 'failed' });
}

/** A replay: one attempt outside the ladder; its failure leaves the delivery as it was. */
async function replay(deps: DeliverDeps, target: DeliveryTarget, lease: Lease): Promise<Outcome> {
  if (!lease.taken) return waitFor(lease);
  const number = Math.min(target.attempt_count + 1, MAX_ATTEMPTS);
  // The owner asked for it (at the replay pump's pace): a broken webhook's break does not hold it back.
  const result = await attemptInSlot(deps, target, number, { probe: true });
  if (!madeNow(result)) return result;
  await recordMade(
    deps.store,
    deps.db,
    {
      deliveryId: target.id,
      attempt: number,
      trigger: 'replay',
      result,
      status: result.ok ? 'succeeded' : target.status,
      nextAttemptAt: result.ok ? null : target.next_attempt_at,
      now: deps.now(),
    },
    target.webhook_id,
  );
  countAttempt(target, result, false);
  if (result.ok && target.status !== 'succeeded') recordDelivery({ outcome: 'succeeded' });
  return ACK;
}

/** The next attempt of the ladder, when it is due and this process holds the lease. */
async function scheduled(deps: DeliverDeps, target: DeliveryTarget, lease: Lease): Promise<Outcome> {
  if (target.status === 'succeeded' || target.status === 'failed') return ACK;
  const number = target.scheduled_attempts + 1;
  if (number > MAX_ATTEMPTS) {
    await endFailed(deps, target, target.last_error);
    return ACK;
  }
  const early = target.next_attempt_at ? target.next_attempt_at.getTime() - deps.now().getTime() : 0;
  if (early > 20) {
    // Redelivered before its step (e.g. after a crash): wait for it, leaving the delivery to whoever comes then; a
    // long wait parked (a crash between recording an attempt and parking its delivery lands here).
    if (lease.taken) await deps.store.release(target.id);
    if (early <= PARK_AFTER_MS) return { retryInMs: early };
    await deps.store.park([{ id: target.id, dueAt: target.next_attempt_at! }]);
    return ACK;
  }
  if (!lease.taken) return waitFor(lease);
  const result = await attemptInSlot(deps, target, number);
  return madeNow(result) ? recordScheduled(deps, target, number, result) : result;
}

/** How long an attempt made is kept trying to be recorded while Postgres is out of reach. */
export const RECORD_PERSIST_MS = 120_000;

/**
 * Records an attempt that was made. When the record fails (Postgres failing over or cut off), it is tried again, after
 * 0.5 s and doubling to 5 s, for up to RECORD_PERSIST_MS, its message kept in progress meanwhile (the consumer keeps
 * every held message alive); before each new try it looks whether the last one committed after all (its reply lost
 * with the connection). Thrown only after that, as before: the message is redelivered and the attempt made again.
 * Thrown at once, a receiver got every attempt in flight at a failover twice (the failover rig, test/cluster: one or
 * two per Postgres failover, one per 30 s cut): the redelivered message found the lease lapsed and sent it again.
 */
export async function recordMade(
  store: Pick<DeliveryStore, 'record'>,
  db: Db,
  record: AttemptRecord,
  webhookId: string,
  persistMs = RECORD_PERSIST_MS,
): Promise<void> {
  const deadline = Date.now() + persistMs;
  for (let wait = 500; ; wait = Math.min(wait * 2, 5000)) {
    try {
      await store.record(record, webhookId);
      return;
    } catch (err) {
      if (Date.now() + wait > deadline) throw err;
      await sleep(wait);
      if (await attemptRecorded(db, record).catch(() => false)) return;
    }
  }
}

/** Records a scheduled attempt: the delivery succeeded, failed for good, or waits for the ladder's next step. */
async function recordScheduled(
  deps: DeliverDeps,
  target: DeliveryTarget,
  number: number,
  result: AttemptResult,
): Promise<Outcome> {
  const now = deps.now();
  const record = { deliveryId: target.id, attempt: number, trigger: 'schedule' as const, result, now };
  if (result.ok || number >= MAX_ATTEMPTS) {
    await recordMade(
      deps.store,
      deps.db,
      { ...record, status: result.ok ? 'succeeded' : 'failed', nextAttemptAt: null },
      target.webhook_id,
    );
    countAttempt(target, result, false);
    recordDelivery({ outcome: result.ok ? 'succeeded' : 'failed' });
    // Post → webhook: a submission id is a ULID, whose first characters are the time it was received.
    if (result.ok && target.submission_id)
      recordDeliveryLatency((now.getTime() - receivedAt(target.submission_id)) / 1000);
    return ACK;
  }
  // The ladder's step, or longer when the receiver asked for a longer wait (`Retry-After` on a 429 or 503).
  const delay = Math.max(retryDelayMs(deps.config.WEBHOOK_RETRY_SCHEDULE, number), result.retryAfterMs ?? 0);
  const next = new Date(now.getTime() + delay);
  await recordMade(deps.store, deps.db, { ...record, status: 'retrying', nextAttemptAt: next }, target.webhook_id);
  countAttempt(target, result, true);
  if (delay <= PARK_AFTER_MS) return { retryInMs: delay };
  await deps.store.park([{ id: target.id, dueAt: next }]);
  return ACK;
}

/** Counts an attempt at the delivery's webhook in the metrics (by outcome and webhook). */
export function countAttempt(target: DeliveryTarget, result: AttemptResult, willRetry: boolean): void {
  recordAttempt({
    outcome: result.outcome,
    seconds: result.durationMs / 1000,
    willRetry,
    webhookId: target.webhook_id,
  });
}

/**
 * One attempt of the delivery: a signed POST to its webhook (the envelope or its chat message), or, for an
 * integration, its row, record or page written through the tool's API.
 */
export function attempt(deps: DeliverDeps, target: DeliveryTarget, attemptNumber: number): Promise<AttemptResult> {
  // A webhook has no destination: it never asks (so a webhook's attempt runs no integration code).
  if (target.destination && target.sealed_credential && isIntegration(target.format))
    return sendToIntegration(
      target.format,
      {
        type: target.event_type,
        data: target.data,
        formName: target.form_name,
        webhookId: target.webhook_id,
        destination: target.destination,
        credential: deps.secrets.open(target.sealed_credential),
        apis: deps.config,
        timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
      },
      deps.now(),
    );
  return sendWebhook({
    agent: deps.agent,
    // A chat webhook's URL is its credential, sealed (its `url` is only what may be shown); one stored before: as is.
    url:
      isChatFormat(target.format) && target.sealed_credential
        ? deps.secrets.open(target.sealed_credential)
        : target.url,
    webhookId: target.webhook_id,
    allowPrivateNetworks: deps.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
    type: target.event_type,
    deliveryId: target.id,
    data: target.data,
    attempt: attemptNumber,
    secret: deps.secrets.open(target.sealed_secret),
    now: deps.now(),
    chat: { format: target.format, formName: target.form_name, baseUrl: deps.config.PUBLIC_BASE_URL },
  });
}

import { context } from '@opentelemetry/api';
import { Value } from '@sinclair/typebox/value';
import type { Subscription } from 'nats';
import { type Logger } from '@intake/shared/base';
import { formProject, newId } from '@intake/shared/contracts';
import { contextFromHeaders, type Nats } from '@intake/shared/messaging';
import {
  TEST_PING_SLOT_WAIT_MS,
  TEST_PING_SUBJECT,
  TestPingRequest,
  type TestPingAnswer,
} from '@intake/shared/webhooks';
import { type Platform, type Worker } from '@intake/shared/runtime';
import type { AttemptResult } from './attempt';
import { attempt, countAttempt, type DeliverDeps } from './deliver';
import { findWebhookOfAccount, updateDeliveryStatus, type DeliveryTarget } from './delivery.repository';
import { insertDelivery } from './record.repository';
import type { SendSlots, Slot } from './slots';

/*
 * The test ping, asked for by management over NATS (TEST_PING_SUBJECT and its schemas in @intake/shared) and made
 * here, through the send path's slots, attempt and record.
 */

/** The queue group of the delivery processes answering test pings: one of them answers each. */
const TEST_PING_QUEUE = 'delivery-test-ping';

/** Answers management's test pings (serveTestPings) with attempts through `deps`, the send path's slots and agent. */
export function answerTestPings(deps: DeliverDeps, { nats, logger }: Pick<Platform, 'nats' | 'logger'>): Worker {
  return serveTestPings(nats, logger, async (ping) => {
    const result = await testPing(deps, { accountId: ping.account_id, webhookId: ping.webhook_id });
    if (!result) return { not_found: true };
    const { deliveryId, ok, statusCode, error, durationMs } = result;
    return { delivery_id: deliveryId, ok, status_code: statusCode, error, duration_ms: Math.round(durationMs) };
  });
}

/**
 * Answers test pings (one process of the queue group each) with `ping`'s answer, inside the asker's trace. A request
 * that cannot be read, or a ping that fails, goes unanswered: the asker answers its caller 503 when nothing comes.
 */
function serveTestPings(
  nats: Nats,
  logger: Logger,
  ping: (request: TestPingRequest) => Promise<TestPingAnswer>,
): { stop(): Promise<void> } {
  let subscription: Subscription | undefined;
  // On the connection now and on each that replaces one closed for good.
  const stopFollowing = nats.eachConnection((nc) => {
    subscription = nc.subscribe(nats.names.subject(TEST_PING_SUBJECT), {
      queue: TEST_PING_QUEUE,
      callback: (err, msg) => {
        if (err) return;
        let request: unknown;
        try {
          request = JSON.parse(msg.string());
        } catch {
          return;
        }
        if (!Value.Check(TestPingRequest, request)) return;
        context
          .with(contextFromHeaders(msg.headers), () => ping(request))
          .then((answer) => msg.respond(JSON.stringify(answer)))
          .catch((pingErr: unknown) => logger.warn({ err: pingErr }, 'test ping failed'));
      },
    });
  });
  return {
    async stop() {
      stopFollowing();
      await subscription?.drain().catch(() => undefined);
    },
  };
}

/**
 * A test ping (`POST /v1/webhooks/:id/test`, asked for by management over NATS): a `webhook.test` delivery
 * `{ form_id, project, sample: true }` made now and attempted once, never retried, through the path every attempt takes: the
 * webhook's send slots (a ping to an endpoint whose slots are all held by attempts it has not answered waits up to
 * TEST_PING_SLOT_WAIT_MS, then fails without being sent), the same signed request, the same record (trigger `test`).
 * Answers undefined when the account has no such webhook.
 */
export async function testPing(
  deps: DeliverDeps,
  ping: { accountId: string; webhookId: string },
): Promise<(AttemptResult & { deliveryId: string }) | undefined> {
  const webhook = await findWebhookOfAccount(deps.db, ping.accountId, ping.webhookId);
  if (!webhook) return undefined;
  const now = deps.now();
  const deliveryId = newId('delivery', now.getTime());
  await insertDelivery(deps.db, {
    id: deliveryId,
    account_id: webhook.account_id,
    webhook_id: webhook.id,
    form_id: webhook.form_id,
    submission_id: null,
    event_type: 'webhook.test',
    data: { form_id: webhook.form_id, project: formProject(webhook), sample: true },
    now,
  });
  // Read with what sending needs of its webhook; a new row nobody else knows of needs no lease.
  const [claim] = await deps.store.claim([{ id: deliveryId, trigger: 'replay', leaseMs: deps.store.leaseMs }]);
  const target = claim?.target;
  if (!target) return undefined; // the webhook was deleted meanwhile (its deliveries with it)
  try {
    return await attemptPing(deps, target, now);
  } finally {
    deps.store.done(deliveryId);
  }
}

/** The test ping's one attempt, through the webhook's send slots, and its record. */
async function attemptPing(
  deps: DeliverDeps,
  target: DeliveryTarget,
  now: Date,
): Promise<AttemptResult & { deliveryId: string }> {
  const deliveryId = target.id;
  const slot = await slotWithin(deps.slots, target, TEST_PING_SLOT_WAIT_MS);
  let result: AttemptResult;
  if (!slot) {
    const error = 'not sent: every send slot of this webhook is held by attempts its endpoint has not answered yet';
    await updateDeliveryStatus(deps.db, { deliveryId, status: 'failed', lastError: error, now: deps.now() });
    return {
      deliveryId,
      ok: false,
      outcome: 'network_error',
      statusCode: null,
      error,
      durationMs: 0,
      startedAt: now,
      responseBody: null,
    };
  }
  let outcome: boolean | undefined;
  try {
    result = await attempt(deps, target, 1);
    outcome = result.ok;
  } finally {
    // The owner's ping counts: a success ends a broken webhook's break (SendSlots, BREAK).
    slot.release(outcome);
  }
  const status = result.ok ? 'succeeded' : 'failed';
  await deps.store.record(
    {
      deliveryId,
      attempt: 1,
      trigger: 'test',
      result,
      status,
      nextAttemptAt: null,
      now: deps.now(),
    },
    target.webhook_id,
  );
  // An attempt at a receiver like any other; not a delivery (intake.deliveries counts submissions' deliveries). The
  // owner looks at the webhook's health next: written before the answer, not within the second.
  countAttempt(target, result, false);
  await deps.store.health.write();
  return { ...result, deliveryId };
}

/** A send slot for `target`'s webhook, waiting for one up to `waitMs`; undefined when none came free. */
async function slotWithin(slots: SendSlots, target: DeliveryTarget, waitMs: number): Promise<Slot | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    // The owner asked for this attempt now: a broken webhook's break does not hold it back.
    const slot = slots.take({ accountId: target.account_id, webhookId: target.webhook_id }, undefined, {
      probe: true,
    });
    if ('release' in slot) return slot;
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(slot.deferMs, left, 250)));
  }
}

import { type Db } from '@intake/shared/base';
import { problem } from '@intake/shared/contracts';
import { type Nats } from '@intake/shared/messaging';
import { requestDelivery } from '@intake/shared/webhooks';
import { type Platform } from '@intake/shared/runtime';
import {
  findAttemptsOfDeliveries,
  findDeliveriesOfSubmission,
  findDelivery,
  findFailedDeliveryIds,
  findLatestDeliveries,
  findWebhookUrls,
  isWebhookEnabled,
  type AttemptRow,
  type DeliveryLogRow,
} from './delivery-log.repository';
import { findWebhook, type WebhookRow } from './webhook.repository';
import { submissionExists } from '../submissions/submission.repository';
import { unaudited, type Audit } from '../platform/audit-trail';

/** The spec's log size. */
export const DELIVERY_LOG_LIMIT = 50;

/** A delivery with every attempt and its webhook's current URL (a delivery's webhook is never gone: they go together). */
export type DeliveryWithAttempts = DeliveryLogRow & { webhook_url: string; attempts: AttemptRow[] };
export type DeliveryFilter = 'all' | 'failed' | 'pending' | 'succeeded';
const FILTER_STATUSES: Record<Exclude<DeliveryFilter, 'all'>, string[]> = {
  failed: ['failed'],
  pending: ['pending', 'retrying'],
  succeeded: ['succeeded'],
};

async function withAttempts(db: Db, accountId: string, deliveries: DeliveryLogRow[]): Promise<DeliveryWithAttempts[]> {
  const [attempts, urls] = await Promise.all([
    findAttemptsOfDeliveries(
      db,
      deliveries.map((d) => d.id),
    ),
    findWebhookUrls(
      db,
      accountId,
      deliveries.map((d) => d.webhook_id),
    ),
  ]);
  return deliveries.map((d) => ({
    ...d,
    webhook_url: urls.get(d.webhook_id) ?? '',
    attempts: attempts.filter((a) => a.delivery_id === d.id),
  }));
}

/** The webhook's last 50 deliveries (in the given states, `pending` covering `retrying`), newest first, each with every attempt. */
export async function deliveryLog(props: {
  db: Db;
  accountId: string;
  webhookId: string;
  status?: DeliveryFilter;
}): Promise<DeliveryWithAttempts[]> {
  const { db, accountId, webhookId } = props;
  if (!(await findWebhook(db, accountId, webhookId))) throw problem('not-found', `No webhook ${webhookId}`);
  const statuses = props.status && props.status !== 'all' ? FILTER_STATUSES[props.status] : undefined;
  return withAttempts(
    db,
    accountId,
    await findLatestDeliveries(db, accountId, webhookId, DELIVERY_LOG_LIMIT, statuses),
  );
}

/** The deliveries of one submission, one per webhook it went to, each with every attempt. */
export async function submissionDeliveries(props: {
  db: Db;
  accountId: string;
  submissionId: string;
}): Promise<DeliveryWithAttempts[]> {
  const { db, accountId, submissionId } = props;
  if (!(await submissionExists(db, accountId, submissionId)))
    throw problem('not-found', `No submission ${submissionId}`);
  return withAttempts(db, accountId, await findDeliveriesOfSubmission(db, accountId, submissionId));
}

/** The account's webhook `id`, refused (409) while disabled unless the replay is only counted (`dryRun`). */
export async function replayableWebhook(db: Db, accountId: string, id: string, dryRun = false): Promise<WebhookRow> {
  const webhook = await findWebhook(db, accountId, id);
  if (!webhook) throw problem('not-found', `No webhook ${id}`);
  if (!webhook.enabled && !dryRun) throw problem('conflict', 'The webhook is disabled; enable it before replaying');
  return webhook;
}

/** Most failed deliveries replayed by one request. */
export const REPLAY_FAILED_LIMIT = 500;

/** Queues a replay of every failed delivery of a webhook (oldest first, at most REPLAY_FAILED_LIMIT). */
export async function replayFailedDeliveries(
  props: Pick<Platform, 'db' | 'nats'> & { audit: Audit; accountId: string; webhookId: string },
): Promise<string[]> {
  const { db, nats, accountId, webhookId } = props;
  await replayableWebhook(db, accountId, webhookId);
  const ids = await findFailedDeliveryIds(db, accountId, webhookId, REPLAY_FAILED_LIMIT);
  for (const id of ids) await replayDelivery({ db, nats, audit: unaudited, accountId, id });
  await props.audit.record(db, {
    action: 'deliveries.replayed',
    target: { type: 'webhook', id: webhookId },
    details: { count: ids.length },
  });
  return ids;
}

/** Queues an immediate extra attempt of one delivery (a new message with a fresh msgID; the worker checks Postgres). */
export async function replayDelivery(props: {
  db: Db;
  nats: Nats;
  /** Records the replay once it is queued (the replays of `replayFailedDeliveries` are recorded as one). */
  audit: Audit;
  accountId: string;
  id: string;
}): Promise<{ id: string; status: string; webhook_id: string }> {
  const delivery = await findDelivery(props.db, props.accountId, props.id);
  if (!delivery) throw problem('not-found', `No delivery ${props.id}`);
  if (!(await isWebhookEnabled(props.db, props.accountId, delivery.webhook_id))) {
    throw problem('conflict', 'The webhook of this delivery is disabled; enable it before replaying');
  }
  try {
    await requestDelivery(props.nats, { deliveryId: delivery.id, trigger: 'replay' });
  } catch {
    throw problem(
      'service-unavailable',
      'The replay could not be queued; try again shortly',
      {},
      { 'Retry-After': '5' },
    );
  }
  const target = { type: 'delivery', id: delivery.id };
  await props.audit.record(props.db, { action: 'deliveries.replayed', target, details: { count: 1 } });
  return delivery;
}

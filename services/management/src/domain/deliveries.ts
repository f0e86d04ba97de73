import { problem, requestDelivery, type Db, type Nats } from '@intake/shared';
import {
  findAttemptsOfDeliveries,
  findDelivery,
  findLatestDeliveries,
  isWebhookEnabled,
  type AttemptRow,
  type DeliveryLogRow,
} from '../repositories/delivery-log.repository';
import { findWebhook } from '../repositories/webhook.repository';

/** The spec's log size. */
export const DELIVERY_LOG_LIMIT = 50;

/** The webhook's last 50 deliveries, newest first, each with every attempt. */
export async function deliveryLog(props: {
  db: Db;
  accountId: string;
  webhookId: string;
}): Promise<(DeliveryLogRow & { attempts: AttemptRow[] })[]> {
  const { db, accountId, webhookId } = props;
  if (!(await findWebhook(db, accountId, webhookId))) throw problem('not-found', `No webhook ${webhookId}`);
  const deliveries = await findLatestDeliveries(db, accountId, webhookId, DELIVERY_LOG_LIMIT);
  const attempts = await findAttemptsOfDeliveries(
    db,
    deliveries.map((d) => d.id),
  );
  return deliveries.map((d) => ({ ...d, attempts: attempts.filter((a) => a.delivery_id === d.id) }));
}

/** Queues an immediate extra attempt of one delivery (a new message with a fresh msgID; the worker checks Postgres). */
export async function replayDelivery(props: {
  db: Db;
  nats: Nats;
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
  return delivery;
}

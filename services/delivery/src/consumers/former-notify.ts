import {
  ACK,
  checkSubmissionEvent,
  runConsumer,
  startPeriodic,
  type Delivered,
  type Outcome,
  type Platform,
  type Worker,
} from '@intake/shared';
import { requestNotification } from '../domain/notify';
import { findFanOutTargets, formKey } from '../repositories/fan-out-batch.repository';

/**
 * The durable that sent notification e-mail before the fan-out requested it (`delivery-notify`, on
 * the events stream). An earlier release leaves it there, with what it had not yet mailed.
 */
export const FORMER_NOTIFY_CONSUMER = 'delivery-notify';

/**
 * Keeps a former `delivery-notify` consumer drained after an upgrade, for as long as it exists: each
 * received submission of a form with addresses it holds becomes a `delivery.notification`, which the
 * mail consumer sends once whoever else asked (the fan-out of this release asks too; a replica of the
 * earlier one, still running during a rolling upgrade, does not, and this is what mails its
 * submissions). It is never deleted here: no replica can tell that none of the earlier release is
 * left (README, "JetStream consumers", says when to delete it). It is looked for at start and every
 * `intervalMs`; where there is none (or no stream), nothing runs.
 */
export function drainFormerNotifyConsumer(platform: Platform, options: { intervalMs?: number } = {}): Worker {
  const { nats, db, logger } = platform;
  const stream = nats.names.eventsStream;
  let consumer: { stop(): Promise<void> } | undefined;
  let stopped = false;

  /** Each received submission of a form with addresses becomes a `delivery.notification`. */
  const forward = async (batch: Delivered[]): Promise<Outcome[]> => {
    const events = batch.map(({ data }) => checkSubmissionEvent(data));
    const received = events.flatMap((c) => (c.ok && c.event.status === 'received' ? [c.event] : []));
    const targets = await findFanOutTargets(db, received);
    await Promise.all(
      received.flatMap((event) => {
        const to = targets.get(formKey(event))?.notifyEmails ?? [];
        return to.length > 0 ? [requestNotification(nats, { event, to })] : [];
      }),
    );
    return events.map((c): Outcome => (c.ok ? ACK : { drop: `not a submission event: ${c.error}` }));
  };

  const check = async (): Promise<void> => {
    const exists = await nats.jsm.consumers.info(stream, FORMER_NOTIFY_CONSUMER).then(
      () => true,
      (err: Error) => {
        if (/(consumer|stream) not found/i.test(String(err.message))) return false;
        throw err;
      },
    );
    if (stopped) return;
    if (!exists) {
      const running = consumer;
      consumer = undefined;
      return running?.stop();
    }
    if (consumer) return;
    logger.warn(
      { durable: FORMER_NOTIFY_CONSUMER, stream },
      'an earlier release left its notification consumer: forwarding what it holds as mail requests; delete it once no replica of that release runs',
    );
    consumer = runConsumer({
      nats,
      stream,
      durable: FORMER_NOTIFY_CONSUMER,
      logger,
      concurrency: 64,
      gatherMs: 5,
      handleBatch: forward,
    });
  };

  const periodic = startPeriodic({
    intervalMs: options.intervalMs ?? 60_000,
    logger,
    failure: 'could not look up the former notification consumer; will retry',
    task: check,
  });
  const first = check().catch((err: unknown) =>
    logger.warn({ err }, 'could not look up the former notification consumer; will retry'),
  );
  return {
    async stop() {
      stopped = true;
      await first;
      await periodic.stop();
      await consumer?.stop();
    },
  };
}

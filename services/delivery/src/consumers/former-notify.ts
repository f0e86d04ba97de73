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
import { findNotifyEmailsOfForms } from '../repositories/fan-out-batch.repository';

/**
 * The durable that sent notification e-mail before the fan-out requested it (`delivery-notify`, on
 * the events stream). Releases before 0.2 left it there with what it had not yet mailed.
 */
export const FORMER_NOTIFY_CONSUMER = 'delivery-notify';

/**
 * Drains a former `delivery-notify` consumer after an upgrade, so no submission it still held goes
 * unmailed: each of its events becomes a `delivery.notification` (the mail consumer sends it once,
 * whoever else requested it), and once it has acknowledged every event up to the stream's last one
 * as of `graceMs` after this process started (by then no replica of the old release still fans out
 * without requesting mail), it is deleted. Where there is none, it does nothing after one look-up.
 */
export function drainFormerNotifyConsumer(
  platform: Platform,
  options: { graceMs?: number; intervalMs?: number } = {},
): Worker {
  const { nats, db, logger } = platform;
  const stream = nats.names.eventsStream;
  const graceUntil = Date.now() + (options.graceMs ?? 10 * 60_000);
  let consumer: { stop(): Promise<void> } | undefined;
  let lastSeq: number | undefined;
  let finished = false;

  const finish = async () => {
    finished = true;
    await consumer?.stop();
    consumer = undefined;
  };

  const check = async (): Promise<void> => {
    if (finished) return;
    const info = await nats.jsm.consumers.info(stream, FORMER_NOTIFY_CONSUMER).catch((err: Error) => {
      if (/consumer not found/i.test(String(err.message))) return undefined;
      throw err;
    });
    if (!info) return finish();
    if (lastSeq === undefined && Date.now() >= graceUntil)
      lastSeq = (await nats.jsm.streams.info(stream)).state.last_seq;
    if (lastSeq !== undefined && info.ack_floor.stream_seq >= lastSeq && info.num_ack_pending === 0) {
      await finish();
      await nats.jsm.consumers.delete(stream, FORMER_NOTIFY_CONSUMER).catch(() => undefined);
      logger.info({ durable: FORMER_NOTIFY_CONSUMER }, 'the former notification consumer is drained: deleted it');
      return;
    }
    consumer ??= runConsumer({
      nats,
      stream,
      durable: FORMER_NOTIFY_CONSUMER,
      logger,
      concurrency: 64,
      gatherMs: 5,
      handleBatch: forward,
      handle: async (msg, data) => (await forward([{ msg, data }]))[0] ?? ACK,
    });
  };

  /** Each received submission of a form with addresses becomes a `delivery.notification`. */
  const forward = async (batch: Delivered[]): Promise<Outcome[]> => {
    const events = batch.map(({ data }) => checkSubmissionEvent(data));
    const received = events.flatMap((c) => (c.ok && c.event.status === 'received' ? [c.event] : []));
    const addresses = await findNotifyEmailsOfForms(db, [...new Set(received.map((e) => e.form_id))]);
    await Promise.all(
      received.flatMap((event) => {
        const to = addresses.get(event.form_id);
        return to ? [requestNotification(nats, { event, to })] : [];
      }),
    );
    return events.map((c): Outcome => (c.ok ? ACK : { drop: `not a submission event: ${c.error}` }));
  };

  const periodic = startPeriodic({
    intervalMs: options.intervalMs ?? 5000,
    logger,
    failure: 'could not drain the former notification consumer; will retry',
    task: check,
  });
  const first = check().catch((err: unknown) =>
    logger.warn({ err }, 'could not look up the former notification consumer'),
  );
  return {
    async stop() {
      await first;
      await periodic.stop();
      await finish();
    },
  };
}

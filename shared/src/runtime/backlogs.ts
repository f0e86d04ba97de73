import type { BatchObservableResult } from '@opentelemetry/api';
import type { ConsumerInfo } from 'nats';
import type { Db } from '../base/db';
import { instruments } from '../telemetry/signals';
import type { Nats } from '../messaging/nats';
import { streamReplicas } from './health';

/**
 * The age (s) of the oldest message a consumer has not acknowledged: the first of its subject after its ack floor
 * (a message read by sequence and subject from the stream); 0 when it has none.
 */
export async function oldestPendingAge(nats: Nats, stream: string, info: ConsumerInfo): Promise<number> {
  if (info.num_pending + info.num_ack_pending === 0) return 0;
  const seq = info.ack_floor.stream_seq + 1;
  const filter = info.config.filter_subject;
  // The server answers the first message of `filter` at or after `seq` (STREAM.MSG.GET's next_by_subj).
  const query = (filter ? { seq, next_by_subj: filter } : { seq }) as unknown as { seq: number };
  const message = await nats.jsm.streams.getMessage(stream, query).catch(() => undefined);
  return message ? Math.max(0, (Date.now() - message.time.getTime()) / 1000) : 0;
}

/**
 * Observes, at each metric collection, whether this process is connected to NATS, the replicas (current ones too), size and size limit of Intake's streams, the pending counts of every
 * durable consumer on them (and their max_ack_pending) and (when `db` is given: processes that run an outbox relay) the outbox backlog and
 * its lag. Reads JetStream consumer info and one Postgres query; errors skip that collection.
 * Returns a function that stops observing.
 */
export function observeBacklogs(props: { nats: Nats; db?: Db }): () => void {
  const { nats, db } = props;
  const i = instruments();
  const streamGauges = async (result: BatchObservableResult): Promise<void> => {
    for (const stream of [nats.names.eventsStream, nats.names.deliveriesStream]) {
      try {
        const info = await nats.jsm.streams.info(stream);
        const { replicas, current } = streamReplicas(nats, info);
        result.observe(i.streamReplicas, replicas, { stream });
        result.observe(i.streamCurrentReplicas, current, { stream });
        result.observe(i.streamBytes, info.state.bytes, { stream });
        result.observe(i.streamMaxBytes, info.config.max_bytes, { stream });
        const first = info.state.messages > 0 ? Date.parse(info.state.first_ts) : NaN;
        result.observe(i.streamOldestAge, Number.isNaN(first) ? 0 : Math.max(0, (Date.now() - first) / 1000), {
          stream,
        });
        for await (const info of nats.jsm.consumers.list(stream)) {
          const attrs = { stream, consumer: info.name };
          result.observe(i.consumerPending, info.num_pending, attrs);
          result.observe(i.consumerAckPending, info.num_ack_pending, attrs);
          // -1 (no limit) is left out: the headroom alert divides by it.
          if (info.config.max_ack_pending !== undefined && info.config.max_ack_pending > 0)
            result.observe(i.consumerMaxAckPending, info.config.max_ack_pending, attrs);
          result.observe(i.consumerOldestAge, await oldestPendingAge(nats, stream, info), attrs);
        }
      } catch {
        // The stream is missing or has no leader to answer: no replica is current; skip its other gauges.
        result.observe(i.streamReplicas, nats.replicas, { stream });
        result.observe(i.streamCurrentReplicas, 0, { stream });
      }
    }
  };
  const outboxGauges = async (result: BatchObservableResult): Promise<void> => {
    if (!db) return;
    try {
      const row = (await db('outbox')
        .select(
          db.raw('count(*)::int AS pending'),
          db.raw('coalesce(extract(epoch FROM now() - min(created_at)), 0)::float AS lag'),
        )
        .first()) as { pending: number; lag: number } | undefined;
      result.observe(i.outboxPending, row?.pending ?? 0);
      result.observe(i.outboxLag, Math.max(0, row?.lag ?? 0));
    } catch {
      // Postgres is down: skip this collection.
    }
  };
  const callback = async (result: BatchObservableResult): Promise<void> => {
    const connected = nats.isConnected();
    result.observe(i.natsConnected, connected ? 1 : 0);
    // Cut off, a JetStream request waits out its timeout (5 s each): the scrape would time out, this gauge with it.
    await Promise.all([connected ? streamGauges(result) : undefined, outboxGauges(result)]);
  };
  const observed = [
    i.consumerPending,
    i.consumerAckPending,
    i.consumerMaxAckPending,
    i.natsConnected,
    i.consumerOldestAge,
    i.streamReplicas,
    i.streamCurrentReplicas,
    i.streamBytes,
    i.streamMaxBytes,
    i.streamOldestAge,
    ...(db ? [i.outboxPending, i.outboxLag] : []),
  ];
  i.meter.addBatchObservableCallback(callback, observed);
  return () => i.meter.removeBatchObservableCallback(callback, observed);
}

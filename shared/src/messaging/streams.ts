import { type ConsumerConfig, type StreamConfig, RetentionPolicy, DiscardPolicy, StorageType, nanos } from 'nats';
import type { Nats, StreamLimits } from './nats';

/** The JetStream streams every service provisions at start, their bounds, and the durable consumers. */

/** The stream bounds of the settings: a stream's own, else the deprecated NATS_STREAM_MAX_BYTES for both. */
export function streamLimits(config: {
  NATS_EVENTS_MAX_BYTES?: number;
  NATS_DELIVERIES_MAX_BYTES?: number;
  NATS_STREAM_MAX_BYTES?: number;
  NATS_EVENTS_MAX_AGE?: number;
}): StreamLimits {
  return {
    eventsMaxBytes: config.NATS_EVENTS_MAX_BYTES ?? config.NATS_STREAM_MAX_BYTES,
    deliveriesMaxBytes: config.NATS_DELIVERIES_MAX_BYTES ?? config.NATS_STREAM_MAX_BYTES,
    eventsMaxAgeMs: config.NATS_EVENTS_MAX_AGE,
  };
}

/** What provisioning a stream that JetStream has no room for throws: it names the setting and JetStream's answer. */
export class StreamProvisioningError extends Error {}

const WEEK_MS = 7 * 24 * 3600 * 1000;
const DUPLICATE_WINDOW_MS = 10 * 60 * 1000;

/**
 * Creates (or updates) the streams. Safe to call from every service at every start. An existing
 * stream is updated to the settings here, its replicas too: JetStream copies its messages to the
 * new replicas (or drops the extra ones) while it keeps serving. Each bound is applied only when its
 * setting is (`nats.streams`, see streamLimits): unset, a new stream gets the default (unbounded,
 * events kept 7 days) and an existing one keeps its own, so an operator's change stays. What a full
 * stream does: the events stream drops its oldest events (long consumed, unless fan-out is that far
 * behind: the submission reconciler then fans those submissions out from Postgres; alert on
 * `intake.consumer.oldest_pending_age` against `intake.stream.max_age`); the deliveries stream holds
 * only requests not yet settled (a work queue), so it refuses new ones and fan-out retries them until
 * there is room: none is ever dropped.
 *
 * JetStream reserves a stream's `max_bytes` on every replica when the stream is made or changed, and
 * refuses one that does not fit its store: that is thrown as a StreamProvisioningError naming the
 * setting and JetStream's answer, and a stream this call made before (still empty) is deleted again,
 * so a retry with smaller bounds starts from nothing rather than from half the streams.
 */
export async function ensureStreams(nats: Nats): Promise<void> {
  const { names, streams: limits } = nats;
  const common = { num_replicas: nats.replicas, storage: StorageType.File };
  const streams: { config: Partial<StreamConfig>; onCreate: Partial<StreamConfig>; setting: string }[] = [
    {
      config: {
        ...common,
        name: names.eventsStream,
        subjects: [names.subject('submission.>')],
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        ...(limits.eventsMaxBytes === undefined ? {} : { max_bytes: limits.eventsMaxBytes }),
        ...(limits.eventsMaxAgeMs === undefined
          ? {}
          : {
              max_age: nanos(limits.eventsMaxAgeMs),
              duplicate_window: nanos(Math.min(DUPLICATE_WINDOW_MS, limits.eventsMaxAgeMs)),
            }),
      },
      // A message id seen again within 10 minutes is dropped.
      onCreate: { max_age: nanos(WEEK_MS), duplicate_window: nanos(DUPLICATE_WINDOW_MS) },
      setting: limits.eventsMaxBytes === undefined ? 'unbounded' : 'NATS_EVENTS_MAX_BYTES',
    },
    {
      config: {
        ...common,
        name: names.deliveriesStream,
        subjects: [names.subject('delivery.>')],
        retention: RetentionPolicy.Workqueue,
        discard: DiscardPolicy.New,
        ...(limits.deliveriesMaxBytes === undefined ? {} : { max_bytes: limits.deliveriesMaxBytes }),
      },
      onCreate: { max_age: nanos(WEEK_MS), duplicate_window: nanos(DUPLICATE_WINDOW_MS) },
      setting: limits.deliveriesMaxBytes === undefined ? 'unbounded' : 'NATS_DELIVERIES_MAX_BYTES',
    },
  ];
  const made: string[] = [];
  for (const { config, onCreate, setting } of streams) {
    const name = config.name as string;
    try {
      let exists = true;
      try {
        await nats.jsm.streams.info(name);
      } catch (err) {
        if (!/stream not found/i.test(String((err as Error).message))) throw err;
        exists = false;
      }
      if (exists) await nats.jsm.streams.update(name, config);
      else {
        try {
          await nats.jsm.streams.add({ ...onCreate, ...config });
          made.push(name);
        } catch (addErr) {
          if (!/already in use/i.test(String((addErr as Error).message))) throw addErr;
        }
      }
    } catch (err) {
      if (!/insufficient (storage )?resources/i.test(String((err as Error).message))) throw err;
      const undone = await undoMade(nats, made);
      const bytes = (n: number | undefined) => (n === undefined ? 'none set' : `${n} bytes`);
      throw new StreamProvisioningError(
        `JetStream has no room for stream ${name} (${setting === 'unbounded' ? 'no bound set' : `${setting}=${config.max_bytes}`}` +
          ` × ${nats.replicas} replica(s)); JetStream answered: ${(err as Error).message}. JetStream reserves each ` +
          `stream's bound up front on every replica: its store (the NATS PVC, jetstream.fileStore) must exceed the ` +
          `sum of the bounds of every Intake prefix (events ${bytes(limits.eventsMaxBytes)}, deliveries ` +
          `${bytes(limits.deliveriesMaxBytes)} here). Lower NATS_EVENTS_MAX_BYTES / NATS_DELIVERIES_MAX_BYTES or ` +
          `grow the store.${undone}`,
        { cause: err },
      );
    }
  }
}

/** Deletes the streams made by this call, while they are still empty; says what it did. */
async function undoMade(nats: Nats, made: string[]): Promise<string> {
  const said: string[] = [];
  for (const name of made) {
    const info = await nats.jsm.streams.info(name).catch(() => undefined);
    if (info && info.state.messages === 0 && (await nats.jsm.streams.delete(name).catch(() => false)))
      said.push(` ${name}, made by this provisioning, was deleted again (empty): nothing is left half done.`);
    else said.push(` ${name} was made by this provisioning and is kept (it holds messages already).`);
  }
  return said.join('');
}

/**
 * Creates the durable consumer, or updates it to `config` when it exists, with the replicas of the
 * streams (its acknowledgements survive losing a node as the messages do).
 */
export async function ensureConsumer(
  nats: Nats,
  stream: string,
  settings: Partial<ConsumerConfig> & { durable_name: string },
  onlyWhenCreated: Partial<ConsumerConfig> = {},
): Promise<void> {
  const config = { num_replicas: nats.replicas, ...settings };
  try {
    await nats.jsm.consumers.info(stream, config.durable_name);
    await nats.jsm.consumers.update(stream, config.durable_name, config);
  } catch (err) {
    if (!/consumer not found/i.test(String((err as Error).message))) throw err;
    await nats.jsm.consumers.add(stream, { ...onlyWhenCreated, ...config });
  }
}

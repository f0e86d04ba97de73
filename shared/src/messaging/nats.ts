import {
  connect,
  type NatsConnection,
  type JetStreamClient,
  type JetStreamManager,
  type ConsumerConfig,
  type StreamConfig,
  RetentionPolicy,
  DiscardPolicy,
  StorageType,
  nanos,
  headers as natsHeaders,
  type MsgHdrs,
} from 'nats';
import { context, propagation, ROOT_CONTEXT, type Context as OtelContext } from '@opentelemetry/api';

export interface Nats {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** Subject and stream names, all derived from NATS_PREFIX so test runs never share them. */
  names: NatsNames;
  /** Replicas of the streams and durable consumers this process provisions (NATS_STREAM_REPLICAS). */
  replicas: number;
  /** The most bytes each stream keeps (NATS_STREAM_MAX_BYTES); undefined leaves an existing stream's limit as it is. */
  maxStreamBytes?: number;
}

export interface NatsNames {
  prefix: string;
  eventsStream: string;
  deliveriesStream: string;
  subject(name: string): string;
}

export function natsNames(prefix: string): NatsNames {
  const upper = prefix.toUpperCase();
  return {
    prefix,
    eventsStream: `${upper}_EVENTS`,
    deliveriesStream: `${upper}_DELIVERIES`,
    subject: (name) => `${prefix}.${name}`,
  };
}

/**
 * Connects and keeps reconnecting forever, to any server of `url` (comma-separated; the servers a
 * cluster announces are added); starts even while NATS is down (waitOnFirstConnect).
 */
export async function connectNats(
  url: string,
  prefix: string,
  name: string,
  options: { replicas?: number; maxStreamBytes?: number } = {},
): Promise<Nats> {
  const nc = await connect({
    servers: url.split(',').map((s) => s.trim()),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    timeout: 5000,
    noAsyncTraces: true,
  });
  return {
    nc,
    js: nc.jetstream(),
    jsm: await nc.jetstreamManager({ timeout: 5000 }),
    names: natsNames(prefix),
    replicas: options.replicas ?? 1,
    maxStreamBytes: options.maxStreamBytes,
  };
}

/**
 * Creates (or updates) the streams. Safe to call from every service at every start. An existing
 * stream is updated to the settings here, its replicas too: JetStream copies its messages to the
 * new replicas (or drops the extra ones) while it keeps serving. Its size limit is set only when
 * NATS_STREAM_MAX_BYTES is (else a new stream is unbounded, an existing one keeps its own). What a
 * full stream does: the events stream keeps every event a week whether consumed or not, so it drops
 * its oldest (long consumed, unless a consumer is that far behind: alert on `intake.consumer.pending`);
 * the deliveries stream holds only requests not yet settled (a work queue), so it refuses new ones
 * and fan-out retries them until there is room: none is ever dropped.
 */
export async function ensureStreams(nats: Nats): Promise<void> {
  const { names } = nats;
  // Both streams keep messages on disk for a week and drop a message id seen again within 10 minutes.
  const kept = {
    num_replicas: nats.replicas,
    storage: StorageType.File,
    max_age: nanos(7 * 24 * 3600 * 1000),
    duplicate_window: nanos(10 * 60 * 1000),
    ...(nats.maxStreamBytes === undefined ? {} : { max_bytes: nats.maxStreamBytes }),
  };
  const streams: Partial<StreamConfig>[] = [
    {
      ...kept,
      name: names.eventsStream,
      subjects: [names.subject('submission.>')],
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
    },
    {
      ...kept,
      name: names.deliveriesStream,
      subjects: [names.subject('delivery.>')],
      retention: RetentionPolicy.Workqueue,
      discard: DiscardPolicy.New,
    },
  ];
  for (const config of streams) {
    try {
      await nats.jsm.streams.info(config.name as string);
      await nats.jsm.streams.update(config.name as string, config);
    } catch (err) {
      if (!/stream not found/i.test(String((err as Error).message))) throw err;
      try {
        await nats.jsm.streams.add(config);
      } catch (addErr) {
        if (!/already in use/i.test(String((addErr as Error).message))) throw addErr;
      }
    }
  }
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

/** Trace context of the active span as a plain object (stored on outbox rows, copied to NATS headers). */
export function currentTraceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

export function toNatsHeaders(values: Record<string, string>): MsgHdrs {
  const h = natsHeaders();
  for (const [k, v] of Object.entries(values)) h.set(k, v);
  return h;
}

export function contextFromHeaders(h: MsgHdrs | undefined): OtelContext {
  return propagation.extract(ROOT_CONTEXT, h, {
    get: (carrier, key) => carrier?.get(key) || undefined,
    keys: (carrier) => (carrier ? carrier.keys() : []),
  });
}

import {
  connect,
  type NatsConnection,
  type JetStreamClient,
  type JetStreamManager,
  type ConsumerConfig,
  type StreamConfig,
  RetentionPolicy,
  StorageType,
  nanos,
  headers as natsHeaders,
  type MsgHdrs,
  type JsMsg,
} from 'nats';
import { context, propagation, ROOT_CONTEXT, trace, SpanKind, type Context as OtelContext } from '@opentelemetry/api';
import type { Logger } from './logger';
import { isProblem } from './problems';
import { failSpan } from './spans';

export interface Nats {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** Subject and stream names, all derived from NATS_PREFIX so test runs never share them. */
  names: NatsNames;
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

/** Connects and keeps reconnecting forever; starts even while NATS is down (waitOnFirstConnect). */
export async function connectNats(url: string, prefix: string, name: string): Promise<Nats> {
  const nc = await connect({
    servers: url.split(','),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    timeout: 5000,
    noAsyncTraces: true,
  });
  return { nc, js: nc.jetstream(), jsm: await nc.jetstreamManager({ timeout: 5000 }), names: natsNames(prefix) };
}

/** Creates (or updates) the streams. Safe to call from every service at every start. */
export async function ensureStreams(nats: Nats): Promise<void> {
  const { names } = nats;
  // Both streams keep messages on disk for a week and drop a message id seen again within 10 minutes.
  const kept = {
    storage: StorageType.File,
    max_age: nanos(7 * 24 * 3600 * 1000),
    duplicate_window: nanos(10 * 60 * 1000),
  };
  const streams: Partial<StreamConfig>[] = [
    { ...kept, name: names.eventsStream, subjects: [names.subject('submission.>')], retention: RetentionPolicy.Limits },
    {
      ...kept,
      name: names.deliveriesStream,
      subjects: [names.subject('delivery.>')],
      retention: RetentionPolicy.Workqueue,
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

/** Creates the durable consumer, or updates it to `config` when it exists. */
export async function ensureConsumer(
  nats: Nats,
  stream: string,
  config: Partial<ConsumerConfig> & { durable_name: string },
): Promise<void> {
  try {
    await nats.jsm.consumers.info(stream, config.durable_name);
    await nats.jsm.consumers.update(stream, config.durable_name, config);
  } catch (err) {
    if (!/consumer not found/i.test(String((err as Error).message))) throw err;
    await nats.jsm.consumers.add(stream, config);
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

/** What a handler tells the consumer loop to do with a message. */
export type Outcome = { ack: true } | { retryInMs: number } | { drop: string };
export const ACK: Outcome = { ack: true };

export interface ConsumerOptions {
  nats: Nats;
  stream: string;
  durable: string;
  logger: Logger;
  /** At most this many messages are handled at once. */
  concurrency: number;
  handle(msg: JsMsg, data: unknown): Promise<Outcome>;
}

/**
 * Pulls from a durable consumer and handles messages with bounded concurrency, each inside a
 * CONSUMER span that continues the publisher's trace. Poison messages (bad JSON) are terminated;
 * a handler error naks with a short delay so the message comes back.
 */
export function runConsumer(options: ConsumerOptions): { stop(): Promise<void> } {
  const { nats, stream, durable, logger, concurrency } = options;
  const tracer = trace.getTracer('intake-nats');
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let messages: { stop(): void } | undefined;

  const handleOne = async (msg: JsMsg): Promise<void> => {
    const parent = contextFromHeaders(msg.headers);
    await tracer.startActiveSpan(
      `${msg.subject} process`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'nats',
          'messaging.destination.name': msg.subject,
          'messaging.consumer.group.name': durable,
        },
      },
      parent,
      async (span) => {
        try {
          let data: unknown;
          try {
            data = JSON.parse(new TextDecoder().decode(msg.data));
          } catch {
            logger.error({ subject: msg.subject, durable }, 'dropping a message that is not JSON');
            msg.term();
            return;
          }
          const outcome = await options.handle(msg, data);
          if ('ack' in outcome) await msg.ackAck().catch(() => msg.ack());
          else if ('retryInMs' in outcome) msg.nak(outcome.retryInMs);
          else {
            logger.error({ subject: msg.subject, durable, reason: outcome.drop }, 'dropping a message');
            msg.term();
          }
        } catch (err) {
          failSpan(span, err);
          if (!isProblem(err))
            logger.warn({ err, subject: msg.subject, durable }, 'message handling failed; it will be redelivered');
          msg.nak(1000);
        } finally {
          span.end();
        }
      },
    );
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      try {
        const consumer = await nats.js.consumers.get(stream, durable);
        const iter = await consumer.consume({ max_messages: concurrency });
        messages = iter;
        if (stopped) iter.stop();
        for await (const msg of iter) {
          const p = handleOne(msg).finally(() => inFlight.delete(p));
          inFlight.add(p);
          if (inFlight.size >= concurrency) await Promise.race(inFlight);
          if (stopped) break;
        }
      } catch (err) {
        if (stopped) break;
        logger.warn({ err, durable }, 'consumer loop failed; restarting');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  };
  const done = loop();

  return {
    async stop() {
      stopped = true;
      messages?.stop();
      await Promise.allSettled([...inFlight]);
      await Promise.race([done, new Promise((r) => setTimeout(r, 2000).unref())]);
    },
  };
}

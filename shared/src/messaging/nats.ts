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
import type { Logger } from '../base/logger';
import { isProblem } from '../contracts/problems';
import { failSpan } from '../base/spans';

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

/** One message of a batch with its parsed body. */
export interface Delivered {
  msg: JsMsg;
  data: unknown;
}

/**
 * What `runConsumer` runs. `handle` takes one message; `handleBatch` (optional when `handle` is
 * given) the messages that arrived together, in one call (one transaction), returning one outcome
 * per message in order. When a batch throws, each of its messages is handled alone, so one bad
 * message cannot hold back the others. Batches are made only while tracing is off: with tracing on,
 * each message is handled alone in its own span, continuing its own trace. Without `handle`, a
 * message handled alone goes to `handleBatch` as a batch of one.
 */
export type ConsumerOptions = ConsumerBase &
  (
    | { handle(msg: JsMsg, data: unknown): Promise<Outcome>; handleBatch?(batch: Delivered[]): Promise<Outcome[]> }
    | { handle?: undefined; handleBatch(batch: Delivered[]): Promise<Outcome[]> }
  );

interface ConsumerBase {
  nats: Nats;
  stream: string;
  durable: string;
  logger: Logger;
  /**
   * The most messages this process holds at once (handled, or waiting in a batch). It pulls only
   * that many, so nothing waits in a buffer towards its ack deadline.
   */
  concurrency: number;
  /** The most messages in one `handleBatch` call (default: all that arrived together). */
  maxBatch?: number;
  /**
   * How long a batch waits for more messages after its first (default 0: only those that arrived
   * in the same read). At a steady trickle a few milliseconds turn one statement per message
   * into one per batch; the messages stay kept alive meanwhile. `'whileBusy'`: a message that
   * arrives while none of this consumer's batches runs is handled at once (with those of the same
   * read), and those that arrive while one runs are handled together as soon as it ends, as
   * ingest's group writer does; a trickle then waits for nothing, and a busy consumer still makes
   * one statement of many messages.
   */
  gatherMs?: number | 'whileBusy';
}

/** How long one pull request waits for messages before the loop asks again. */
const PULL_EXPIRES_MS = 5000;

const tracer = trace.getTracer('intake-nats');

/**
 * Whether spans are recorded at all (an SDK is registered): without one, no per-message span work
 * is done. The probe span is never ended, so it is never exported.
 */
function tracingOn(): boolean {
  return tracer.startSpan('intake-nats probe').isRecording();
}

/**
 * Pulls from a durable consumer and handles messages with bounded concurrency. It never holds
 * more than `concurrency` messages: each pull asks for the free slots only, and every message
 * held is kept alive (`working()`) until it is acknowledged, so none reaches its ack deadline
 * while this process still has it, however slow the handlers or the event loop. When tracing
 * is on, each message is handled inside a CONSUMER span that continues the publisher's trace.
 * Poison messages (bad JSON) are terminated; a handler error naks with a short delay so the
 * message comes back.
 */
export function runConsumer(options: ConsumerOptions): { stop(): Promise<void> } {
  const { nats, stream, durable, logger, concurrency } = options;
  const handle =
    options.handle ??
    (async (msg: JsMsg, data: unknown): Promise<Outcome> => (await options.handleBatch([{ msg, data }]))[0] ?? ACK);
  /** Messages this process holds, with when it last told the server it is working on each. */
  const held = new Map<JsMsg, number>();
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let pull: { stop(): void } | undefined;
  let ackWaitMs = 30_000;
  let keepAlive: NodeJS.Timeout | undefined;
  let traced = tracingOn();
  const decoder = new TextDecoder();

  // Acks of one turn of the event loop go to the server together, in one write: the client writes
  // at the end of each microtask run, and handlers finish in separate I/O callbacks.
  let acks: JsMsg[] = [];
  const sendAcks = (): void => {
    const batch = acks;
    acks = [];
    for (const msg of batch) {
      try {
        msg.ack();
      } catch {
        // The connection is closed: the server redelivers the message, which every handler tolerates.
      }
    }
  };

  const settle = async (msg: JsMsg, outcome: Outcome): Promise<void> => {
    // A plain ack (no round trip): one lost with a connection is a redelivery, which every handler tolerates.
    if ('ack' in outcome) {
      if (acks.push(msg) === 1) setImmediate(sendAcks);
    } else if ('retryInMs' in outcome) msg.nak(outcome.retryInMs);
    else {
      logger.error({ subject: msg.subject, durable, reason: outcome.drop }, 'dropping a message');
      msg.term();
    }
  };

  const parse = (msg: JsMsg): { ok: true; data: unknown } | { ok: false } => {
    try {
      return { ok: true, data: JSON.parse(decoder.decode(msg.data)) };
    } catch {
      logger.error({ subject: msg.subject, durable }, 'dropping a message that is not JSON');
      msg.term();
      return { ok: false };
    }
  };

  const failed = (msg: JsMsg, err: unknown): void => {
    if (!isProblem(err))
      logger.warn({ err, subject: msg.subject, durable }, 'message handling failed; it will be redelivered');
    msg.nak(1000);
  };

  const handleOne = async (msg: JsMsg, data: unknown): Promise<void> => {
    try {
      await settle(msg, await handle(msg, data));
    } catch (err) {
      failed(msg, err);
      throw err;
    }
  };

  const inSpan = (msg: JsMsg, work: () => Promise<void>): Promise<void> => {
    if (!traced) return work().catch(() => undefined);
    return tracer.startActiveSpan(
      `${msg.subject} process`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'nats',
          'messaging.destination.name': msg.subject,
          'messaging.consumer.group.name': durable,
        },
      },
      contextFromHeaders(msg.headers),
      async (span) => {
        try {
          await work();
        } catch (err) {
          failSpan(span, err);
        } finally {
          span.end();
        }
      },
    );
  };

  const single = (msg: JsMsg): Promise<void> =>
    inSpan(msg, async () => {
      const parsed = parse(msg);
      if (parsed.ok) await handleOne(msg, parsed.data);
    });

  const batch = async (msgs: JsMsg[]): Promise<void> => {
    const items: Delivered[] = [];
    for (const msg of msgs) {
      const parsed = parse(msg);
      if (parsed.ok) items.push({ msg, data: parsed.data });
    }
    if (items.length === 0) return;
    let outcomes: Outcome[] | undefined;
    try {
      outcomes = await options.handleBatch!(items);
    } catch (err) {
      if (!isProblem(err))
        logger.warn({ err, durable, size: items.length }, 'batch failed; handling its messages one by one');
    }
    if (outcomes)
      await Promise.all(items.map((item, i) => inSpan(item.msg, () => settle(item.msg, outcomes[i] ?? ACK))));
    else await Promise.all(items.map((item) => inSpan(item.msg, () => handleOne(item.msg, item.data))));
  };

  // Messages waiting to be handled as one batch (handleBatch, tracing off), and when they will be.
  const gathered: JsMsg[] = [];
  let flushing: { timer: NodeJS.Timeout } | { immediate: NodeJS.Immediate } | undefined;
  let batchesRunning = 0;
  const whileBusy = options.gatherMs === 'whileBusy';
  const flush = (): void => {
    if (flushing && 'timer' in flushing) clearTimeout(flushing.timer);
    else if (flushing) clearImmediate(flushing.immediate);
    flushing = undefined;
    while (gathered.length) {
      const group = gathered.splice(0, options.maxBatch ?? gathered.length);
      batchesRunning++;
      track(
        group,
        batch(group).finally(() => {
          batchesRunning--;
          if (whileBusy && batchesRunning === 0 && gathered.length) flush();
        }),
      );
    }
  };
  const gather = (msg: JsMsg): void => {
    gathered.push(msg);
    if (gathered.length >= (options.maxBatch ?? Infinity)) return flush();
    // Already due; or, while a batch runs, due when it ends (see flush).
    if (flushing || (whileBusy && batchesRunning > 0)) return;
    const { gatherMs } = options;
    flushing =
      typeof gatherMs === 'number' && gatherMs > 0
        ? { timer: setTimeout(flush, gatherMs) }
        : { immediate: setImmediate(flush) };
  };

  const track = (msgs: JsMsg[], work: Promise<void>): void => {
    const p = work.finally(() => {
      inFlight.delete(p);
      for (const m of msgs) held.delete(m);
    });
    inFlight.add(p);
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      try {
        const consumer = await nats.js.consumers.get(stream, durable);
        traced = tracingOn();
        ackWaitMs = Math.max(1000, Number((await consumer.info(true)).config.ack_wait ?? 0) / 1e6 || 30_000);
        clearInterval(keepAlive);
        // Every message held is touched well before its deadline (a third of it), from receipt to acknowledgement.
        keepAlive = setInterval(
          () => {
            const now = Date.now();
            for (const [msg, touched] of held)
              if (now - touched >= ackWaitMs / 3) {
                msg.working();
                held.set(msg, now);
              }
          },
          Math.min(1000, ackWaitMs / 6),
        );
        keepAlive.unref();
        while (!stopped) {
          while (held.size >= concurrency) await Promise.race(inFlight);
          // Busy: let a few more slots free up (2 ms) rather than pull one message per request.
          if (held.size > 0 && concurrency - held.size < concurrency / 4) await new Promise((r) => setTimeout(r, 2));
          const iter = await consumer.fetch({ max_messages: concurrency - held.size, expires: PULL_EXPIRES_MS });
          pull = iter;
          if (stopped) iter.stop();
          for await (const msg of iter) {
            held.set(msg, Date.now());
            // With tracing on, each message keeps its own span and trace (no batches).
            if (!options.handleBatch || traced) track([msg], single(msg));
            else gather(msg);
          }
          // The pull is over: what it gathered is handled now, so that the wait for a free slot
          // above always has a message in flight to wait for.
          if (gathered.length) flush();
          pull = undefined;
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
      pull?.stop();
      await Promise.allSettled([...inFlight]);
      sendAcks();
      clearInterval(keepAlive);
      await Promise.race([done, new Promise((r) => setTimeout(r, 2000).unref())]);
    },
  };
}

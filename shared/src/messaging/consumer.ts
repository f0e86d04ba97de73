/**
 * The one way a service consumes a JetStream durable: `runConsumer` pulls messages and hands them
 * to ONE handler, `handleBatch(messages)`, in batches; a lone message is a batch of one.
 *
 * The contract of a handler:
 * - It gets the messages (each with its parsed JSON body) that arrived together, and answers one
 *   outcome per message, in order: `ACK`, `{ retryInMs }` (nak with that delay) or `{ drop }`
 *   (term, logged). An answer left out is an ack.
 * - Each outcome may be a promise of its own: the handler does the work the batch shares (one
 *   statement for all its messages), then lets each message settle when its own work is done. A
 *   message holds its slot until it settles, so a slow webhook receiver holds one slot, never the
 *   others; the batch counts as done (for `gatherMs: 'whileBusy'`) once the handler has answered.
 * - When the handler throws for a batch of several, each of its messages is handed to it again
 *   alone, as a batch of one, so one bad message cannot hold back the others. When it throws for a
 *   batch of one, or a message's own outcome rejects, that message is nak'ed with a delay of
 *   `FAILED_RETRY_MS` (a `problem` is expected and not logged; anything else is logged).
 * - Work done for one message that should join its trace (a publish, a webhook call) runs inside
 *   `message.within(...)`.
 *
 * What the runtime guarantees:
 * - It never holds more than `concurrency` messages (handled, waiting in a batch, or waiting for
 *   their outcome): each pull asks only for the free slots.
 * - Every message held is kept alive (`working()`) until it is settled, so none reaches its ack
 *   deadline while this process still has it, however slow the handler.
 * - A message that is not JSON is terminated (poison) and never reaches the handler.
 * - `stop()` stops pulling, hands over what is gathered, and waits until every message held is settled.
 * - Tracing adds spans and never changes which code runs or how messages are grouped: each message
 *   has a CONSUMER span continuing its publisher's trace (from the NATS headers), open from receipt
 *   to its settle; without an SDK the same calls are the OpenTelemetry API's no-ops.
 *
 * The pulls are nats.js's own `consumer.fetch()`, sized to the free slots. Its `consume()` is not
 * used: it refills its buffer as messages reach the client, not as the handler frees slots, so a
 * slow handler would leave messages buffered (held, not kept alive) beyond `concurrency`.
 *
 * A submission event may go without its fields (too large for a message): `eventWithPayload`, at the end, reads
 * them back.
 */
import type { Consumer, JsMsg } from 'nats';
import { context, SpanKind, trace, type Span } from '@opentelemetry/api';
import { parseJsonOrdered } from '../base/ordered-json';
import type { Logger } from '../base/logger';
import type { Db } from '../base/db';
import type { SubmissionEvent } from '../contracts/events';
import { failSpan } from '../telemetry/signals';
import { isProblem } from '../contracts/problems';
import { contextFromHeaders } from './trace-headers';
import { type Nats } from './nats';

/** What a handler tells the consumer to do with a message. */
export type Outcome = { ack: true } | { retryInMs: number } | { drop: string };
export const ACK: Outcome = { ack: true };

/** Runs `work` inside a message's span, so that what it publishes or calls continues the message's trace. */
export type Within = <T>(work: () => T) => T;

/** One message handed to a handler. */
export interface Delivered {
  msg: JsMsg;
  /** The parsed JSON body. */
  data: unknown;
  /** Runs `work` inside this message's span: what it publishes or calls continues the message's trace. */
  within: Within;
}

/** A handler's answer: one outcome per message, in order, each settled when it is ready. */
export type Outcomes = readonly (Outcome | Promise<Outcome>)[];

export interface ConsumerOptions {
  nats: Nats;
  stream: string;
  durable: string;
  logger: Logger;
  /** The most messages this process holds at once (handled, gathered, or waiting for their outcome). */
  concurrency: number;
  /** The most messages in one `handleBatch` call (default: all that are gathered). */
  maxBatch?: number;
  /**
   * How messages are gathered into a batch. A number: how long a batch waits for more after its
   * first (default 0: only those of the same read). `'whileBusy'`: a message that arrives while no
   * batch of this consumer runs is handed over at once (with those of the same read), and those
   * that arrive while one runs go together as soon as it ends (group commit): a trickle waits for
   * nothing, and a busy consumer still makes one statement of many messages.
   */
  gatherMs?: number | 'whileBusy';
  handleBatch(messages: Delivered[]): Outcomes | Promise<Outcomes>;
  /**
   * Makes the stream and the durable consumer again when they are gone (deleted, purged with the stream, or a
   * server restored without them); called before the loop asks again. Without it the loop waits for someone else to.
   */
  provision?(): Promise<void>;
}

/** The nak delay of a message whose handling failed. */
export const FAILED_RETRY_MS = 1000;

/** How long one pull request waits for messages before the loop asks again. */
const PULL_EXPIRES_MS = 5000;

const tracer = trace.getTracer('intake-nats');
const decoder = new TextDecoder();

/** Pulls from a durable consumer and hands its messages to `handleBatch` (see the module's contract). */
export function runConsumer(options: ConsumerOptions): { stop(): Promise<void> } {
  const runner = new ConsumerRun(options);
  return { stop: () => runner.stop() };
}

/** A message held by this process: what the handler sees, and its span. */
interface Entry {
  message: Delivered;
  span: Span;
}

/** Sends the acks of one turn of the event loop in one write (the client writes once per microtask run). */
class AckWriter {
  private pending: JsMsg[] = [];

  ack(msg: JsMsg): void {
    if (this.pending.push(msg) === 1) setImmediate(() => this.flush());
  }

  flush(): void {
    const batch = this.pending;
    this.pending = [];
    for (const msg of batch) tell(() => msg.ack());
  }
}

/** Sends one ack, nak or term; a plain write: one lost with the connection is a redelivery, which every handler tolerates. */
function tell(send: () => void): void {
  try {
    send();
  } catch {
    // The connection is closed: the server redelivers the message.
  }
}

/** The messages this process holds, each touched (`working()`) well before its ack deadline until released. */
class HeldMessages {
  private readonly touched = new Map<JsMsg, number>();
  private waiters: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;

  get size(): number {
    return this.touched.size;
  }

  hold(msg: JsMsg): void {
    this.touched.set(msg, Date.now());
  }

  release(msg: JsMsg): void {
    this.touched.delete(msg);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves once fewer than `limit` messages are held. */
  async fewerThan(limit: number): Promise<void> {
    while (this.touched.size >= limit) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Touches every message a third of `ackWaitMs` after it was last touched. */
  keepAlive(ackWaitMs: number): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => this.touch(ackWaitMs / 3), Math.min(1000, ackWaitMs / 6));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private touch(afterMs: number): void {
    const now = Date.now();
    for (const [msg, touched] of this.touched)
      if (now - touched >= afterMs) {
        tell(() => msg.working());
        this.touched.set(msg, now);
      }
  }
}

/** Gathers entries into batches (see ConsumerOptions.gatherMs) and hands each batch to `run`. */
class Gatherer {
  private gathered: Entry[] = [];
  private due: { timer: NodeJS.Timeout } | { immediate: NodeJS.Immediate } | undefined;
  private running = 0;

  constructor(
    private readonly run: (batch: Entry[]) => Promise<void>,
    private readonly maxBatch: number,
    private readonly gatherMs: number | 'whileBusy',
  ) {}

  add(entry: Entry): void {
    this.gathered.push(entry);
    if (this.gathered.length >= this.maxBatch) return this.flush();
    // Already due; or, while a batch runs, due when it ends.
    if (this.due || (this.gatherMs === 'whileBusy' && this.running > 0)) return;
    const wait = this.gatherMs;
    this.due =
      typeof wait === 'number' && wait > 0
        ? { timer: setTimeout(() => this.flush(), wait) }
        : { immediate: setImmediate(() => this.flush()) };
  }

  /** Hands over everything gathered now, `maxBatch` at a time. */
  flush(): void {
    if (this.due && 'timer' in this.due) clearTimeout(this.due.timer);
    else if (this.due) clearImmediate(this.due.immediate);
    this.due = undefined;
    while (this.gathered.length) {
      const batch = this.gathered.splice(0, this.maxBatch);
      this.running++;
      const ended = (): void => this.ended();
      void this.run(batch).then(ended, ended);
    }
  }

  private ended(): void {
    this.running--;
    if (this.gatherMs === 'whileBusy' && this.running === 0 && this.gathered.length) this.flush();
  }
}

/** One running consumer: the pull loop, and each message from receipt to its settle. */
class ConsumerRun {
  private readonly held = new HeldMessages();
  private readonly acks = new AckWriter();
  private readonly gatherer: Gatherer;
  private readonly done: Promise<void>;
  private stopped = false;
  private pull: { stop(): void } | undefined;
  private emptied: (() => void) | undefined;

  constructor(private readonly options: ConsumerOptions) {
    const { maxBatch = Infinity, gatherMs = 0 } = options;
    this.gatherer = new Gatherer((batch) => this.handle(batch), maxBatch, gatherMs);
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.pull?.stop();
    this.gatherer.flush();
    if (this.held.size > 0) await new Promise<void>((resolve) => (this.emptied = resolve));
    this.acks.flush();
    this.held.stop();
    await Promise.race([this.done, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
  }

  private async loop(): Promise<void> {
    const { nats, stream, durable, logger } = this.options;
    while (!this.stopped) {
      try {
        const consumer = await nats.js.consumers.get(stream, durable);
        const ackWaitNs = Number((await consumer.info(true)).config.ack_wait ?? 0);
        this.held.keepAlive(Math.max(1000, ackWaitNs / 1e6 || 30_000));
        await this.pullFrom(consumer);
      } catch (err) {
        if (this.stopped) break;
        logger.warn({ err, durable }, 'consumer loop failed; restarting');
        await new Promise((resolve) => setTimeout(resolve, 1000));
        if (this.options.provision && /not found|deleted/i.test(String((err as Error).message)))
          await this.options
            .provision()
            .catch((provisionErr: unknown) =>
              logger.warn({ err: provisionErr, durable }, 'could not make the consumer again; will retry'),
            );
      }
    }
  }

  /** Pulls as many messages as there are free slots, again and again. */
  private async pullFrom(consumer: Consumer): Promise<void> {
    const { concurrency } = this.options;
    while (!this.stopped) {
      await this.held.fewerThan(concurrency);
      // Busy: let a few more slots free up (2 ms) rather than pull one message per request.
      if (this.held.size > 0 && concurrency - this.held.size < concurrency / 4)
        await new Promise((resolve) => setTimeout(resolve, 2));
      // The acks of the messages that freed these slots reach the server before the pull does.
      this.acks.flush();
      const pull = await consumer.fetch({ max_messages: concurrency - this.held.size, expires: PULL_EXPIRES_MS });
      this.pull = pull;
      if (this.stopped) pull.stop();
      for await (const msg of pull) this.receive(msg);
      // The pull is over: what it gathered is handed over now, so the wait for a free slot above
      // always waits for a message being handled.
      this.gatherer.flush();
      this.pull = undefined;
    }
  }

  /** Holds a message; a poison one (not JSON) is terminated, any other gathered with its span opened. */
  private receive(msg: JsMsg): void {
    const { logger, durable } = this.options;
    this.held.hold(msg);
    let data: unknown;
    try {
      data = parseJsonOrdered(decoder.decode(msg.data));
    } catch {
      logger.error({ subject: msg.subject, durable }, 'dropping a message that is not JSON');
      tell(() => msg.term());
      return this.release(msg);
    }
    const parent = contextFromHeaders(msg.headers);
    const span = tracer.startSpan(
      // The messaging conventions: `{operation name} {destination}`, its operation type and name.
      `process ${msg.subject}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'nats',
          'messaging.operation.type': 'process',
          'messaging.operation.name': 'process',
          'messaging.destination.name': msg.subject,
          'messaging.consumer.group.name': durable,
        },
      },
      parent,
    );
    const traced = trace.setSpan(parent, span);
    this.gatherer.add({ message: { msg, data, within: (work) => context.with(traced, work) }, span });
    if (this.stopped) this.gatherer.flush();
  }

  /** Hands a batch to the handler, then settles each message as its outcome comes; resolves once the handler answered. */
  private async handle(batch: Entry[]): Promise<void> {
    let outcomes: Outcomes;
    try {
      outcomes = await this.options.handleBatch(batch.map((entry) => entry.message));
    } catch (err) {
      return this.batchFailed(batch, err);
    }
    batch.forEach((entry, i) => {
      void Promise.resolve(outcomes[i] ?? ACK).then(
        (outcome) => this.settle(entry, outcome),
        (err: unknown) => this.failed(entry, err),
      );
    });
  }

  /** A batch of several that throws: each message is handed over again alone. */
  private async batchFailed(batch: Entry[], err: unknown): Promise<void> {
    const { logger, durable } = this.options;
    if (batch.length === 1) return this.failed(batch[0]!, err);
    if (!isProblem(err))
      logger.warn({ err, durable, size: batch.length }, 'batch failed; handing its messages over one by one');
    await Promise.all(batch.map((entry) => this.handle([entry])));
  }

  private settle(entry: Entry, outcome: Outcome): void {
    const { msg } = entry.message;
    if ('ack' in outcome) this.acks.ack(msg);
    else if ('retryInMs' in outcome) tell(() => msg.nak(outcome.retryInMs));
    else {
      this.options.logger.error(
        { subject: msg.subject, durable: this.options.durable, reason: outcome.drop },
        'dropping a message',
      );
      tell(() => msg.term());
    }
    this.end(entry);
  }

  private failed(entry: Entry, err: unknown): void {
    const { msg } = entry.message;
    if (!isProblem(err))
      this.options.logger.warn(
        { err, subject: msg.subject, durable: this.options.durable },
        'message handling failed; it will be redelivered',
      );
    failSpan(entry.span, err);
    tell(() => msg.nak(FAILED_RETRY_MS));
    this.end(entry);
  }

  private end(entry: Entry): void {
    entry.span.end();
    this.release(entry.message.msg);
  }

  private release(msg: JsMsg): void {
    this.held.release(msg);
    if (this.held.size === 0) this.emptied?.();
  }
}

/**
 * The event with its fields, read from the submission when the message went without them; none
 * when that submission has been deleted since (nothing to send). Spam events are returned as they
 * are (nobody sends their fields).
 */
export async function eventWithPayload(db: Db, event: SubmissionEvent): Promise<SubmissionEvent | undefined> {
  if (!event.payload_omitted || event.status !== 'received') return event;
  const row: { payload: Record<string, string> } | undefined = await db('submissions')
    .where({ id: event.submission_id })
    .first('payload');
  return row ? { ...event, payload: row.payload } : undefined;
}

import type { Knex } from 'knex';
import pg from 'pg';
import { trace, SpanKind, context, type Tracer } from '@opentelemetry/api';
import { discardConnection, runPrepared, withPooledConnection, type Db } from '../base/db';
import { newId } from '../contracts/ids';
import type { Logger } from '../base/logger';
import { type Nats, currentTraceHeaders, toNatsHeaders, contextFromHeaders } from './nats';
import { StreamPublisher } from './stream-publisher';
import { failSpan } from '../base/spans';
import { recordOversizedEvent } from '../contracts/metrics';

const CHANNEL = 'intake_outbox';

/**
 * How long the relays' poll leaves an outbox row to the process that wrote it: longer than that
 * process's publish may take (`PUBLISH_TIMEOUT_MS`), so the poll does not publish it a second time.
 */
export const OUTBOX_HOLD_MS = 10_000;

/**
 * Writes an event in the caller's transaction. It is published to JetStream by the relay
 * after commit, with `event_id` as Nats-Msg-Id, so an event exists exactly when its data does.
 * `subject` is relative to NATS_PREFIX (e.g. `submission.created`).
 *
 * The transaction also NOTIFYs every relay. A NOTIFY takes a database-wide lock from commit
 * until the commit is flushed, so it serialises notifying commits on the fsync: the ingest hot
 * path therefore writes its rows with `outboxRow` in its own statement and publishes them itself
 * after its commit (`startCommittedEvents`; the relays' poll takes what it could not).
 */
export async function enqueueEvent(
  trx: Knex.Transaction,
  event: { subject: string; payload: Record<string, unknown>; eventId?: string },
): Promise<string> {
  const row = outboxRow(event);
  await trx('outbox').insert(row);
  await trx.raw('SELECT pg_notify(?, ?)', [CHANNEL, '']);
  return row.event_id;
}

export interface OutboxRow {
  event_id: string;
  subject: string;
  payload: Record<string, unknown> & { event_id: string };
  headers: Record<string, string>;
}

/**
 * The outbox row `enqueueEvent` inserts, for a repository that writes it inside its own statement (then,
 * after commit, publish it with `startCommittedEvents` or call `wakeOutboxRelays()`).
 */
export function outboxRow(event: { subject: string; payload: Record<string, unknown>; eventId?: string }): OutboxRow {
  const eventId = event.eventId ?? newId('event');
  return {
    event_id: eventId,
    subject: event.subject,
    payload: { event_id: eventId, ...event.payload },
    headers: currentTraceHeaders(),
  };
}

/** The relays of this thread, and the background threads of this process that run one, woken by `wakeOutboxRelays()`. */
const localRelays = new Set<() => void>();

/** Wakes the outbox relays of this process (after committing rows written with `outboxRow` outside `enqueueEvent`). */
export function wakeOutboxRelays(): void {
  for (const wake of localRelays) wake();
}

/** Calls `wake` on every `wakeOutboxRelays()` of this thread until the returned function is called. */
export function onOutboxWake(wake: () => void): () => void {
  localRelays.add(wake);
  return () => localRelays.delete(wake);
}

export interface OutboxRelayOptions {
  db: Db;
  databaseUrl: string;
  nats: Nats;
  logger: Logger;
  batchSize?: number;
  pollMs?: number;
  /** How old a row must be for the poll to take it (default `OUTBOX_HOLD_MS`). */
  holdMs?: number;
}

/**
 * Publishes outbox rows in order, and deletes them in the same transaction, which commits only
 * after every PubAck (a failed publish rolls the delete back; a crash after publishing and before
 * the commit publishes again, and JetStream drops the duplicate by its Nats-Msg-Id). The commit does not
 * wait for the WAL flush (`synchronous_commit = off`): a delete lost in a Postgres crash only publishes
 * its events again, which the same Nats-Msg-Id drops, and the group writes of ingest, which must be
 * durable, stop sharing their flushes with the relay. Several relays
 * may run (one per replica): rows are claimed with FOR UPDATE SKIP LOCKED. Woken by LISTEN/NOTIFY
 * and `wakeOutboxRelays()`, when it starts, and by a poll timer because notifications are lost
 * while disconnected. The poll takes only rows older than `OUTBOX_HOLD_MS`: younger ones may be
 * in the hands of the process that wrote them (`startCommittedEvents`), and those it cannot
 * publish are this poll's once they are that old.
 */
export interface OutboxRelay {
  stop(): Promise<void>;
  /** Publishes what is waiting now; resolves with the number of events published. */
  drain(): Promise<number>;
}

export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, nats, logger } = options;
  const batchSize = options.batchSize ?? 200;
  const pollMs = options.pollMs ?? 1000;
  const holdMs = Math.trunc(options.holdMs ?? OUTBOX_HOLD_MS);
  const tracer = trace.getTracer('intake-outbox');
  let stopped = false;
  let running: Promise<number> | undefined;
  let again = false;
  let listener: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  const sink: EventSink = { publisher: new StreamPublisher(nats.nc), nats, logger, tracer };

  // Claimed and removed in one statement, in a transaction that stays open until every PubAck is
  // in: one write per event. The payload comes back as the JSON text that was written (json keeps
  // it as is) and is published as it is. One round trip opens the transaction, makes its commit
  // not wait for the flush (read at commit) and claims; a second commits (or rolls back).
  const claimWhere = (where: string) =>
    'BEGIN; SET LOCAL synchronous_commit = off; ' +
    `DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox ${where}ORDER BY seq LIMIT ${Math.trunc(batchSize)} ` +
    'FOR UPDATE SKIP LOCKED) RETURNING seq, event_id, subject, payload::text AS payload, headers';
  const claimAll = claimWhere('');
  const claimHeldBack = claimWhere(`WHERE created_at < now() - interval '${holdMs} milliseconds' `);

  const publishBatch = (claim: string): Promise<number> =>
    withPooledConnection(db, async (connection) => {
      try {
        const results = (await connection.query(claim)) as unknown as pg.QueryResult<OutboxClaim>[];
        // Three results, the claim's last: anything else must roll back, never commit a delete unpublished.
        const claimed = Array.isArray(results) && results.length === 3 ? results[2] : undefined;
        if (claimed?.command !== 'DELETE') throw new Error('the outbox claim did not answer as three statements');
        const { rows } = claimed;
        if (rows.length > 0)
          await publishEvents(
            sink,
            rows.sort((a, b) => a.seq - b.seq),
          );
        await connection.query('COMMIT');
        return rows.length;
      } catch (err) {
        // Rolled back, the rows stay for the next drain; a connection that cannot roll back is closed.
        await connection.query('ROLLBACK').catch((rollbackErr: unknown) => discardConnection(connection, rollbackErr));
        throw err;
      }
    });

  /** Publishes what `claim` takes, batch after batch; a drain asked for meanwhile runs right after (all rows). */
  const run = async (claim: string): Promise<number> => {
    if (running) {
      if (claim === claimAll) again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      let next = claim;
      try {
        do {
          again = false;
          for (;;) {
            const n = await publishBatch(next);
            total += n;
            if (n < batchSize || stopped) break;
          }
          next = claimAll;
          // Woken while publishing: the commits made meanwhile go out together, at once.
        } while (again && !stopped);
      } catch (err) {
        logger.warn({ err }, 'outbox relay could not publish; will retry');
      } finally {
        running = undefined;
      }
      return total;
    })();
    return running;
  };
  const drain = (): Promise<number> => run(claimAll);

  /**
   * A commit happened: drain at once, or, during a drain, right after it with every commit made
   * meanwhile (as ingest's group writer gathers posts): a trickle waits for nothing, and a busy
   * relay still publishes many events per claim.
   */
  const wake = (): void => {
    if (!stopped) void drain();
  };

  const listen = async (): Promise<void> => {
    if (stopped) return;
    try {
      const client = new pg.Client({ connectionString: options.databaseUrl, connectionTimeoutMillis: 5000 });
      client.on('error', () => undefined);
      client.on('end', () => {
        listener = undefined;
        if (!stopped) setTimeout(() => void listen(), pollMs);
      });
      await client.connect();
      // Stopped while connecting: this client is not the relay's to keep.
      if (stopped) return void (await client.end().catch(() => undefined));
      client.on('notification', wake);
      await client.query(`LISTEN ${CHANNEL}`);
      listener = client;
      // After a reconnect: what was notified while the connection was down.
      void drain();
    } catch {
      if (!stopped) setTimeout(() => void listen(), pollMs);
    }
  };

  const forget = onOutboxWake(wake);
  // What was written before this relay started is published now, young rows too, whether or not
  // LISTEN can be had: without it only the poll runs, which leaves rows for OUTBOX_HOLD_MS.
  void drain();
  void listen();
  const tick = (): void => {
    timer = setTimeout(() => {
      void run(claimHeldBack).finally(() => {
        if (!stopped) tick();
      });
    }, pollMs);
  };
  tick();

  return {
    drain,
    async stop() {
      stopped = true;
      forget();
      if (timer) clearTimeout(timer);
      await running;
      await listener?.end().catch(() => undefined);
      sink.publisher.close();
    },
  };
}

/** An event as it is published: its outbox row, with the payload as the JSON text that was written. */
export interface OutboxEvent {
  event_id: string;
  subject: string;
  payload: string;
  headers: Record<string, string>;
}

/** An outbox row as the relay claims it. */
interface OutboxClaim extends OutboxEvent {
  seq: number;
}

/** Where events go: one publisher per relay or committed-events publisher, and what their spans and logs need. */
interface EventSink {
  publisher: StreamPublisher;
  nats: Nats;
  logger: Logger;
  tracer: Tracer;
}

/** How long JetStream may take to acknowledge a batch before it counts as not published. */
const PUBLISH_TIMEOUT_MS = 5000;

/**
 * Publishes events in the order given and resolves once JetStream has acknowledged every one
 * (the event id is the Nats-Msg-Id, so a second publish of an event is dropped). One PRODUCER span
 * per event, continuing the trace of the request that wrote it; the message carries the span's
 * own context so consumers continue from it.
 */
async function publishEvents({ publisher, nats, logger, tracer }: EventSink, rows: OutboxEvent[]): Promise<void> {
  const maxBytes = (nats.nc.info?.max_payload ?? 1024 * 1024) - MESSAGE_HEADROOM_BYTES;
  const spans = rows.flatMap((row) => {
    const data = fitted(row, maxBytes, logger);
    if (data === undefined) return [];
    const parent = contextFromParent(row.headers);
    const subject = nats.names.subject(row.subject);
    const span = tracer.startSpan(
      `${subject} publish`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.system': 'nats',
          'messaging.destination.name': subject,
          'messaging.message.id': row.event_id,
        },
      },
      parent,
    );
    const headers = context.with(trace.setSpan(parent, span), () => toNatsHeaders(currentTraceHeaders()));
    return [{ span, message: { subject, data, msgId: row.event_id, headers } }];
  });
  try {
    await publisher.publishAll(
      spans.map((s) => s.message),
      PUBLISH_TIMEOUT_MS,
    );
  } catch (err) {
    for (const { span } of spans) failSpan(span, err);
    throw err;
  } finally {
    for (const { span } of spans) span.end();
  }
}

/**
 * `startCommittedEvents`: events per batch at most, and waiting at most (the rest is the relays');
 * while busy, the pause between batches (what arrives meanwhile goes together); how long published
 * rows wait to be removed together.
 */
const COMMITTED = { maxBatch: 1000, maxWaiting: 20_000, gapMs: 5, removeEveryMs: 50 };

/**
 * Removes published rows: one statement for a batch, its commit not waiting for the WAL flush
 * (`set_config(..., true)`, for this statement's transaction only). A removal lost in a crash
 * only has the relay publish the event again, which JetStream drops by its Nats-Msg-Id.
 */
const DELETE_PUBLISHED = {
  name: 'outbox_delete_published',
  text: `DELETE FROM outbox WHERE event_id IN (SELECT unnest($1::text[])
       WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL)`,
};

export interface CommittedEvents {
  /**
   * Publishes events whose outbox rows were just committed, then removes those rows. Never
   * fails: an event it cannot publish (NATS down, a time-out, stopping) keeps its row, which the
   * relays' poll publishes once it is `OUTBOX_HOLD_MS` old.
   */
  publish(events: OutboxEvent[]): void;
  /** Waits for the publish and removal in flight; later events are left to the relays. */
  stop(): Promise<void>;
}

/**
 * A writer's own publisher for the events it has just committed (ingest's group writer): the
 * events go out from memory right after the commit, not through the relay's claim, which costs
 * two round trips and reads every payload back (docs/performance.md, eleventh pass). A quiet
 * service publishes each commit's events at once; a busy one, one batch every few milliseconds
 * (`COMMITTED.gapMs`) with whatever arrived meanwhile. Published rows are removed together, one
 * statement every `COMMITTED.removeEveryMs`.
 * Every guarantee of the outbox stays: the row is committed with the data and removed only after
 * JetStream acknowledged its event, and the relays publish whatever is left.
 */
export function startCommittedEvents(options: { db: Db; nats: Nats; logger: Logger }): CommittedEvents {
  const { db, logger } = options;
  const sink: EventSink = {
    publisher: new StreamPublisher(options.nats.nc),
    nats: options.nats,
    logger,
    tracer: trace.getTracer('intake-outbox'),
  };
  let stopped = false;
  const waiting: OutboxEvent[] = [];
  let publishing: Promise<void> | undefined;
  let published: string[] = [];
  let removing: Promise<void> | undefined;

  const publishWaiting = (): void => {
    const batch = waiting.splice(0, COMMITTED.maxBatch);
    publishing = publishEvents(sink, batch).then(
      () => remove(batch.map((e) => e.event_id)),
      (err: unknown) => logger.warn({ err, events: batch.length }, 'events left to the outbox relay'),
    );
    void publishing.finally(async () => {
      if (waiting.length > 0 && !stopped) await new Promise((resolve) => setTimeout(resolve, COMMITTED.gapMs));
      publishing = undefined;
      if (waiting.length > 0 && !stopped) publishWaiting();
    });
  };

  // Nothing but the relays' hold waits for a removal: the rows published meanwhile go in one statement.
  const remove = (ids: string[]): void => {
    published.push(...ids);
    if (removing) return;
    removing = new Promise<void>((resolve) => setTimeout(resolve, stopped ? 0 : COMMITTED.removeEveryMs)).then(() => {
      const batch = published;
      published = [];
      return runPrepared(db, { ...DELETE_PUBLISHED, values: [batch] }).then(
        () => undefined,
        (err: unknown) => logger.warn({ err, events: batch.length }, 'published events stay in the outbox'),
      );
    });
    void removing.finally(() => {
      removing = undefined;
      if (published.length > 0) remove([]);
    });
  };

  return {
    publish(events) {
      if (stopped || events.length === 0) return;
      const room = COMMITTED.maxWaiting - waiting.length;
      waiting.push(...(room < events.length ? events.slice(0, Math.max(0, room)) : events));
      if (!publishing) publishWaiting();
    },
    async stop() {
      stopped = true;
      waiting.length = 0;
      while (publishing || removing) await Promise.all([publishing, removing]);
      sink.publisher.close();
    },
  };
}

/** Room left in a message for its headers (trace context, Nats-Msg-Id). */
const MESSAGE_HEADROOM_BYTES = 16 * 1024;

/**
 * The body of an outbox row as it can be published: as written when it fits the server's
 * max_payload. A larger event that carries a submission's fields (`payload`) goes without them,
 * marked `payload_omitted` (consumers read them from the submission); ingest already sends large
 * posts that way, this covers every other writer. An event that still does not fit cannot be
 * published at all: it is logged as an error and dropped, so it cannot stall every event after it.
 */
function fitted(
  row: { event_id: string; subject: string; payload: string },
  maxBytes: number,
  logger: Logger,
): string | undefined {
  if (Buffer.byteLength(row.payload) <= maxBytes) return row.payload;
  const event = JSON.parse(row.payload) as Record<string, unknown>;
  if (event.payload && typeof event.payload === 'object') {
    const slim = JSON.stringify({ ...event, payload: {}, payload_omitted: true });
    if (Buffer.byteLength(slim) <= maxBytes) {
      logger.warn(
        { event_id: row.event_id, subject: row.subject, bytes: Buffer.byteLength(row.payload) },
        'event too large for a NATS message: published without its fields',
      );
      recordOversizedEvent({ outcome: 'slimmed' });
      return slim;
    }
  }
  logger.error(
    { event_id: row.event_id, subject: row.subject, bytes: Buffer.byteLength(row.payload), max_payload: maxBytes },
    'event too large for a NATS message: dropped',
  );
  recordOversizedEvent({ outcome: 'dropped' });
  return undefined;
}

function contextFromParent(headers: Record<string, string>) {
  const h = toNatsHeaders(headers ?? {});
  return Object.keys(headers ?? {}).length ? contextFromHeaders(h) : context.active();
}

/**
 * Committed events: an event exists exactly when its data does, and goes out to JetStream once.
 *
 * The contract, for every writer: write the event's outbox row in the transaction that writes its
 * data; after the commit, publish what the transaction committed; a relay picks up whatever was
 * not published. Both ways out are one `Outbox` (`startOutbox`, made per process where the service
 * is composed and passed in) and share its publish:
 *
 * - `publish(events)`, right after a commit, from memory: the writer (ingest's group writer) hands
 *   over the events it just committed; they are published at once and their rows removed
 *   afterwards. It never fails: an event it cannot publish keeps its row.
 * - The relay (`relay` options; one or more per deployment, in any process or thread): claims rows
 *   with FOR UPDATE SKIP LOCKED (several replicas are safe), publishes them, and deletes them in the
 *   claim's transaction, which commits only after every PubAck.
 *
 * The hand-over between the two is one rule, on the row's age: a row younger than `holdMs`
 * (`OUTBOX_HOLD_MS`) may still be in the hands of the process that committed it, whose publish gives
 * up after `PUBLISH_TIMEOUT_MS` (shorter); an older row is nobody's but the relay's, whose poll
 * takes only those. A writer that publishes nothing itself says so with NOTIFY (`enqueueEvent`,
 * `notifyOutboxRelays`), and a relay that starts knows of no writer: both take every row at once.
 * Should both publish one event, JetStream drops the second by its `Nats-Msg-Id` (the event id); a
 * row is removed only after JetStream acknowledged its event. A NOTIFY lost while the relay was
 * disconnected is covered by the poll.
 */
import pg from 'pg';
import type { Knex } from 'knex';
import { trace, context, type Tracer } from '@opentelemetry/api';
import { discardConnection, runPrepared, withPooledConnection, type Db, type Queryable } from '../base/db';
import { newId } from '../contracts/ids';
import type { Logger } from '../base/logger';
import { type Nats, NatsNotConnected } from './nats';
import { currentTraceHeaders, toNatsHeaders, contextFromHeaders } from './trace-headers';
import { publishInSpans, StreamPublisher } from './stream-publisher';
import { recordOversizedEvent, zeroOversizedEvents } from '../telemetry/signals';

const CHANNEL = 'intake_outbox';

/**
 * How long the relays' poll leaves an outbox row to the process that wrote it: longer than that
 * process's publish may take (`PUBLISH_TIMEOUT_MS`), so the poll does not publish it a second time.
 */
export const OUTBOX_HOLD_MS = 10_000;

/**
 * Writes an event in the caller's transaction, for the relays: the transaction also NOTIFYs them.
 * `subject` is relative to NATS_PREFIX (e.g. `submission.created`). A NOTIFY takes a
 * database-wide lock from commit until the commit is flushed, so it serialises notifying commits
 * on the fsync: the ingest hot path writes its rows with `outboxRow` in its own statement instead
 * and publishes them itself after its commit (`Outbox.publish`).
 */
export async function enqueueEvent(
  trx: Knex.Transaction,
  event: { subject: string; payload: Record<string, unknown>; eventId?: string },
): Promise<string> {
  const row = outboxRow(event);
  await trx('outbox').insert(row);
  await notifyOutboxRelays(trx);
  return row.event_id;
}

/** Tells the relays that committed rows wait for them (rows written outside `enqueueEvent` that nobody publishes from memory). */
export async function notifyOutboxRelays(db: Queryable): Promise<void> {
  await db.raw('SELECT pg_notify(?, ?)', [CHANNEL, '']);
}

export interface OutboxRow {
  event_id: string;
  subject: string;
  payload: Record<string, unknown> & { event_id: string };
  headers: Record<string, string>;
}

/** The outbox row `enqueueEvent` inserts, for a repository that writes it inside its own statement (then, after commit, `Outbox.publish`). */
export function outboxRow(event: { subject: string; payload: Record<string, unknown>; eventId?: string }): OutboxRow {
  const eventId = event.eventId ?? newId('event');
  return {
    event_id: eventId,
    subject: event.subject,
    payload: { event_id: eventId, ...event.payload },
    headers: currentTraceHeaders(),
  };
}

/** What a relay needs besides the outbox's own database, NATS and logger. */
export interface RelayOptions {
  /** For LISTEN, on a connection of its own. */
  databaseUrl: string;
  batchSize?: number;
  /** How often the relay polls for rows older than `holdMs` (notifications are lost while disconnected). */
  pollMs?: number;
  /** How old a row must be for the poll to take it (default `OUTBOX_HOLD_MS`). */
  holdMs?: number;
}

export interface OutboxOptions {
  db: Db;
  nats: Nats;
  logger: Logger;
  /** Runs a relay in this outbox; without it the relay runs elsewhere (another thread, process or replica). */
  relay?: RelayOptions;
}

export interface Outbox {
  /**
   * Publishes events whose outbox rows were just committed, then removes those rows. Never fails:
   * an event it cannot publish (NATS down, a time-out, stopping) keeps its row, which a relay
   * publishes once it is `OUTBOX_HOLD_MS` old.
   */
  publish(events: OutboxEvent[]): void;
  /** Relays every row waiting now, young ones too; resolves with the number of events published. */
  drain(): Promise<number>;
  /** Waits for the publishes and removals in flight and stops the relay; later events are left to the relays. */
  stop(): Promise<void>;
}

/** The committed events of one process (see the module's comment): created where the service is composed. */
export function startOutbox(options: OutboxOptions): Outbox {
  const { db, nats, logger } = options;
  zeroOversizedEvents();
  // Made at the first publish: NATS may not have answered yet when the outbox starts (a publish before it does fails
  // and leaves its rows to the relay); made again on a new connection (one closed for good is replaced).
  let publisher: StreamPublisher | undefined;
  const sink: EventSink = {
    get publisher() {
      const { nc } = nats;
      if (publisher?.nc !== nc) {
        publisher?.close();
        publisher = new StreamPublisher(nc);
      }
      return publisher;
    },
    nats,
    logger,
    tracer: trace.getTracer('intake-outbox'),
  };
  const committed = publishCommitted(sink, db);
  const relay = startRelay(sink, db, options.relay);
  return {
    publish: committed.publish,
    drain: relay.drain,
    async stop() {
      await Promise.all([committed.stop(), relay.stop()]);
      publisher?.close();
    },
  };
}

/**
 * The claim: rows taken and removed in one statement, in a transaction that stays open until every
 * PubAck is in (a failed publish rolls the delete back; a crash after publishing and before the
 * commit publishes again, which the Nats-Msg-Id drops). One round trip opens the transaction, makes
 * its commit not wait for the WAL flush (a delete lost in a Postgres crash only publishes its events
 * again, and ingest's group writes, which must be durable, stop sharing their flushes with the
 * relay) and claims; a second commits or rolls back. The payload comes back as the JSON text that
 * was written (json keeps it as is) and is published as it is. `all` takes every row, `old` those
 * older than the hold.
 */
function claimStatements(batchSize: number, holdMs: number): { all: string; old: string } {
  const claimWhere = (where: string) =>
    'BEGIN; SET LOCAL synchronous_commit = off; ' +
    `DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox ${where}ORDER BY seq LIMIT ${Math.trunc(batchSize)} ` +
    'FOR UPDATE SKIP LOCKED) RETURNING seq, event_id, subject, payload::text AS payload, headers';
  return {
    all: claimWhere(''),
    old: claimWhere(`WHERE created_at < now() - interval '${Math.trunc(holdMs)} milliseconds' `),
  };
}

/** Claims one batch with `claim`, publishes it and commits; resolves with the number of events published. */
function relayBatch(sink: EventSink, db: Db, claim: string): Promise<number> {
  return withPooledConnection(db, async (connection) => {
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
}

/**
 * The relay: a drain at its start (every row, whether or not LISTEN can be had: a writer that
 * stopped left its young rows to it), on every NOTIFY, and, every `pollMs`, a poll for the rows
 * older than the hold. Without `options` it drains only when asked.
 */
function startRelay(
  sink: EventSink,
  db: Db,
  options: RelayOptions | undefined,
): { drain(): Promise<number>; stop(): Promise<void> } {
  const batchSize = options?.batchSize ?? 200;
  const claims = claimStatements(batchSize, options?.holdMs ?? OUTBOX_HOLD_MS);
  let stopped = false;
  let running: Promise<number> | undefined;
  let again = false;

  /** Publishes what `claim` takes, batch after batch; a drain asked for meanwhile runs right after (all rows). */
  const run = (claim: string): Promise<number> => {
    if (running) {
      if (claim === claims.all) again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      let next = claim;
      try {
        do {
          again = false;
          let n: number;
          do {
            n = await relayBatch(sink, db, next);
            total += n;
          } while (n === batchSize && !stopped);
          next = claims.all;
          // Woken while publishing: the commits made meanwhile go out together, at once.
        } while (again && !stopped);
      } catch (err) {
        sink.logger.warn({ err }, 'outbox relay could not publish; will retry');
      } finally {
        running = undefined;
      }
      return total;
    })();
    return running;
  };
  const drain = (): Promise<number> => run(claims.all);
  if (!options) return { drain, stop: async () => void (await running) };

  const wake = (): void => {
    if (!stopped) void drain();
  };
  const listening = listenForCommits(options, sink.logger, wake, () => stopped);
  void drain();
  let timer: NodeJS.Timeout | undefined;
  const tick = (): void => {
    timer = setTimeout(() => {
      void run(claims.old).finally(() => {
        if (!stopped) tick();
      });
    }, options.pollMs ?? 1000);
  };
  tick();
  return {
    drain,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await listening.stop();
    },
  };
}

/**
 * LISTENs for the writers' NOTIFY on a connection of its own and calls `wake` on each, and once
 * LISTEN is had (after a reconnect: what was notified while the connection was down); reconnects
 * every `pollMs` while it cannot.
 */
function listenForCommits(
  options: RelayOptions,
  logger: Logger,
  wake: () => void,
  stopped: () => boolean,
): { stop(): Promise<void> } {
  const pollMs = options.pollMs ?? 1000;
  let listener: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  // One retry at a time: a refused connect both rejects and ends its client, and two retries per
  // failure would double the connections tried on every round while Postgres refuses them.
  const listenLater = (): void => {
    if (stopped() || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void listen();
    }, pollMs);
  };
  const listen = async (): Promise<void> => {
    if (stopped()) return;
    const client = new pg.Client({ connectionString: options.databaseUrl, connectionTimeoutMillis: 5000 });
    client.on('error', () => undefined);
    client.on('end', () => {
      if (listener === client) listener = undefined;
      listenLater();
    });
    try {
      await client.connect();
      // Stopped while connecting: this client is not the relay's to keep.
      if (stopped()) return void (await client.end().catch(() => undefined));
      client.on('notification', wake);
      await client.query(`LISTEN ${CHANNEL}`);
      listener = client;
      wake();
    } catch (err) {
      logger.debug({ err }, 'outbox relay cannot LISTEN; polling meanwhile');
      await client.end().catch(() => undefined);
      listenLater();
    }
  };
  void listen();
  return {
    stop: async () => {
      clearTimeout(retry);
      await listener?.end().catch(() => undefined);
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

/** Where an outbox's events go: its publisher, and what their spans and logs need. */
interface EventSink {
  readonly publisher: StreamPublisher;
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
  const messages = rows.flatMap((row) => {
    const data = fitted(row, maxBytes, logger);
    if (data === undefined) return [];
    const subject = nats.names.subject(row.subject);
    return [{ subject, data, msgId: row.event_id, parent: contextFromParent(row.headers) }];
  });
  await publishInSpans(publisher, tracer, messages, PUBLISH_TIMEOUT_MS);
}

/**
 * `Outbox.publish`: events per batch at most, and waiting at most (the rest is the relays'); while
 * busy, the pause between batches (what arrives meanwhile goes together); how long published rows
 * wait to be removed together.
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

/**
 * `Outbox.publish`: the events go out from memory right after the commit, not through the relay's
 * claim, which costs two round trips and reads every payload back. A quiet service publishes each
 * commit's events at once; a busy one, one batch every few milliseconds (`COMMITTED.gapMs`) with
 * whatever arrived meanwhile. Published rows are removed together, one statement every
 * `COMMITTED.removeEveryMs`.
 */
function publishCommitted(sink: EventSink, db: Db): Pick<Outbox, 'publish' | 'stop'> {
  const { logger } = sink;
  let stopped = false;
  const waiting: OutboxEvent[] = [];
  let published: string[] = [];
  // Each of the two loops is a promise while it runs and undefined once it has nothing left: stop()
  // waits on the loops themselves, never on a batch that has settled while its loop goes on.
  let publishing: Promise<void> | undefined;
  let removing: Promise<void> | undefined;

  const publishLoop = async (): Promise<void> => {
    while (waiting.length > 0 && !stopped) {
      const batch = waiting.splice(0, COMMITTED.maxBatch);
      try {
        await publishEvents(sink, batch);
        remove(batch.map((e) => e.event_id));
      } catch (err) {
        // Before NATS's first answer every commit ends here, and the process has said once that it waits for NATS.
        if (err instanceof NatsNotConnected)
          logger.debug({ events: batch.length }, 'NATS not connected yet: events left to the outbox relay');
        else logger.warn({ err, events: batch.length }, 'events left to the outbox relay');
      }
      if (waiting.length > 0 && !stopped) await new Promise((resolve) => setTimeout(resolve, COMMITTED.gapMs));
    }
  };
  const startPublishing = (): void => {
    publishing = publishLoop().finally(() => {
      publishing = undefined;
      if (waiting.length > 0 && !stopped) startPublishing();
    });
  };

  // Nothing but the relays' hold waits for a removal: the rows published meanwhile go in one statement.
  const removeLoop = async (): Promise<void> => {
    while (published.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, stopped ? 0 : COMMITTED.removeEveryMs));
      const batch = published;
      published = [];
      await runPrepared(db, { ...DELETE_PUBLISHED, values: [batch] }).catch((err: unknown) =>
        logger.warn({ err, events: batch.length }, 'published events stay in the outbox'),
      );
    }
  };
  const remove = (ids: string[]): void => {
    published.push(...ids);
    removing ??= removeLoop().finally(() => {
      removing = undefined;
    });
  };

  return {
    publish(events) {
      if (stopped || events.length === 0) return;
      const room = COMMITTED.maxWaiting - waiting.length;
      waiting.push(...(room < events.length ? events.slice(0, Math.max(0, room)) : events));
      if (!publishing) startPublishing();
    },
    async stop() {
      stopped = true;
      waiting.length = 0;
      await publishing;
      await removing;
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

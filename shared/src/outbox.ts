import type { Knex } from 'knex';
import pg from 'pg';
import { trace, SpanKind, SpanStatusCode, context } from '@opentelemetry/api';
import type { Db } from './db';
import { newId } from './ids';
import type { Logger } from './logger';
import { type Nats, currentTraceHeaders, toNatsHeaders, contextFromHeaders } from './nats';

const CHANNEL = 'intake_outbox';

/**
 * Writes an event in the caller's transaction. It is published to JetStream by the relay
 * after commit, with `event_id` as Nats-Msg-Id, so an event exists exactly when its data does.
 * `subject` is relative to NATS_PREFIX (e.g. `submission.created`).
 *
 * The transaction also NOTIFYs every relay. A NOTIFY takes a database-wide lock from commit
 * until the commit is flushed, so it serialises notifying commits on the fsync: the ingest hot
 * path therefore writes its row with `outboxRow` in its own statement and calls
 * `wakeOutboxRelays()` after its commit instead (other relays find the row by their poll).
 */
export async function enqueueEvent(trx: Knex.Transaction, event: { subject: string; payload: Record<string, unknown>; eventId?: string }): Promise<string> {
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

/** The outbox row `enqueueEvent` inserts, for a repository that writes it inside its own statement (then call `wakeOutboxRelays()` after commit). */
export function outboxRow(event: { subject: string; payload: Record<string, unknown>; eventId?: string }): OutboxRow {
  const eventId = event.eventId ?? newId('event');
  return { event_id: eventId, subject: event.subject, payload: { event_id: eventId, ...event.payload }, headers: currentTraceHeaders() };
}

/** The relays running in this process, woken directly by `wakeOutboxRelays()`. */
const localRelays = new Set<() => void>();

/** Wakes the outbox relays of this process (after committing rows written with `outboxRow` outside `enqueueEvent`). */
export function wakeOutboxRelays(): void {
  for (const wake of localRelays) wake();
}

export interface OutboxRelayOptions {
  db: Db;
  databaseUrl: string;
  nats: Nats;
  logger: Logger;
  batchSize?: number;
  pollMs?: number;
}

/**
 * Publishes unpublished outbox rows in order. Several relays may run (one per ingest replica):
 * rows are claimed with FOR UPDATE SKIP LOCKED. Woken by LISTEN/NOTIFY, and by a poll timer
 * because notifications are lost while disconnected.
 */
export function startOutboxRelay(options: OutboxRelayOptions): { stop(): Promise<void>; drain(): Promise<number> } {
  const { db, nats, logger } = options;
  const batchSize = options.batchSize ?? 200;
  const pollMs = options.pollMs ?? 1000;
  const tracer = trace.getTracer('intake-outbox');
  let stopped = false;
  let running: Promise<number> | undefined;
  let again = false;
  let listener: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;

  const publishBatch = async (): Promise<number> => {
    return db.transaction(async (trx) => {
      // Claimed and marked in one statement (the row locks last until commit, which comes only after
      // every PubAck; a failed publish rolls the mark back). One write per event, not a lock then an update.
      const { rows }: { rows: { seq: number; event_id: string; subject: string; payload: unknown; headers: Record<string, string> }[] } = await trx.raw(
        `UPDATE outbox SET published_at = now()
         WHERE seq IN (SELECT seq FROM outbox WHERE published_at IS NULL ORDER BY seq LIMIT ? FOR UPDATE SKIP LOCKED)
         RETURNING seq, event_id, subject, payload, headers`,
        [batchSize],
      );
      if (rows.length === 0) return 0;
      rows.sort((a, b) => a.seq - b.seq);
      await Promise.all(
        rows.map((row) =>
          tracer.startActiveSpan(`${nats.names.subject(row.subject)} publish`, { kind: SpanKind.PRODUCER, attributes: { 'messaging.system': 'nats', 'messaging.destination.name': nats.names.subject(row.subject), 'messaging.message.id': row.event_id } }, contextFromParent(row.headers), async (span) => {
            try {
              await nats.js.publish(nats.names.subject(row.subject), JSON.stringify(row.payload), { msgID: row.event_id, headers: toNatsHeaders(currentTraceHeaders()), timeout: 5000 });
            } catch (err) {
              span.recordException(err as Error);
              span.setStatus({ code: SpanStatusCode.ERROR });
              throw err;
            } finally {
              span.end();
            }
          }),
        ),
      );
      return rows.length;
    });
  };

  const drain = async (): Promise<number> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      try {
        do {
          again = false;
          for (;;) {
            const n = await publishBatch();
            total += n;
            if (n < batchSize || stopped) break;
          }
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
      client.on('notification', () => void drain());
      await client.query(`LISTEN ${CHANNEL}`);
      listener = client;
      void drain();
    } catch {
      if (!stopped) setTimeout(() => void listen(), pollMs);
    }
  };

  const wake = (): void => void drain();
  localRelays.add(wake);
  void listen();
  const tick = (): void => {
    timer = setTimeout(() => {
      void drain().finally(() => {
        if (!stopped) tick();
      });
    }, pollMs);
  };
  tick();

  return {
    drain,
    async stop() {
      stopped = true;
      localRelays.delete(wake);
      if (timer) clearTimeout(timer);
      await running;
      await listener?.end().catch(() => undefined);
    },
  };
}

function contextFromParent(headers: Record<string, string>) {
  const h = toNatsHeaders(headers ?? {});
  return Object.keys(headers ?? {}).length ? contextFromHeaders(h) : context.active();
}

import knex, { type Knex } from 'knex';
import pg from 'pg';
import { parseJsonOrdered } from './ordered-json';

export type Db = Knex;

/** What repository functions run on: the pool, or a transaction they take part in. */
export type Queryable = Knex | Knex.Transaction;

/** The order of a listing, newest first (ties broken by id, so pages never skip or repeat a row). */
export const NEWEST_FIRST: { column: string; order: 'asc' | 'desc' }[] = [
  { column: 'created_at', order: 'desc' },
  { column: 'id', order: 'desc' },
];

// Return bigint columns (file sizes, byte counters) as numbers: they stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));
// json columns (payloads, envelopes) come back with their names in stored order, numeric names too.
pg.types.setTypeParser(pg.types.builtins.JSON, parseJsonOrdered);

export function createDb(
  databaseUrl: string,
  options: {
    poolMax?: number;
    applicationName?: string;
    /**
     * How long a query waits for a connection, a free one of the pool or a new one from Postgres, before it fails (5 s):
     * a service under a burst answers 503 rather than queueing without end. Tests set more (their start-up budget's
     * share): on a loaded machine a pool of a few connections serving a hundred concurrent inserts waits longer.
     */
    waitMs?: number;
    /**
     * Postgres checks this often (ms) whether the client of a running statement is still there, and ends the session
     * when it is gone (client_connection_check_interval, Postgres 14 and later on Linux; ignored where Postgres lacks
     * it). The migrators set it: a migrator killed mid-statement (an index build, a wait) leaves no backend behind.
     */
    clientConnectionCheckMs?: number;
  } = {},
): Db {
  const checkMs = options.clientConnectionCheckMs;
  const waitMs = options.waitMs ?? 5000;
  return knex({
    client: 'pg',
    connection: {
      connectionString: databaseUrl,
      application_name: options.applicationName ?? 'intake',
      connectionTimeoutMillis: waitMs,
    },
    pool: {
      min: 0,
      max: options.poolMax ?? 10,
      acquireTimeoutMillis: waitMs,
      ...(checkMs === undefined
        ? {}
        : {
            afterCreate: (connection: pg.Client, done: (err: Error | null, connection: pg.Client) => void) => {
              connection.query(`SET client_connection_check_interval = ${Math.trunc(checkMs)}`).then(
                () => done(null, connection),
                // 42704: an older Postgres without the setting; 22023: a platform where it must stay 0.
                (err: { code?: string }) =>
                  done(err.code === '42704' || err.code === '22023' ? null : (err as Error), connection),
              );
            },
          }),
    },
    acquireConnectionTimeout: waitMs,
  });
}

/**
 * Runs `work` on a connection of the pool, past knex's builder, runner and transaction machinery
 * (hot paths only: a knex transaction of four statements costs about 380 µs of CPU here, against
 * about 75 µs for one round trip of plain `pg`). Same pool, same errors, same OpenTelemetry pg
 * spans. A connection left in an unknown state (a ROLLBACK that failed) is reported with
 * `discardConnection`.
 */
export async function withPooledConnection<T>(db: Db, work: (connection: pg.ClientBase) => Promise<T>): Promise<T> {
  // A transaction's client would hand out the transaction's own connection, where a procedure's COMMIT fails.
  if ((db as { isTransaction?: boolean }).isTransaction)
    throw new Error('a pooled connection is taken from the pool, not inside a transaction');
  const client = db.client as {
    acquireConnection(): Promise<pg.ClientBase>;
    releaseConnection(connection: pg.ClientBase): Promise<void>;
  };
  const connection = await client.acquireConnection();
  try {
    return await work(connection);
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * Ends a pooled connection that could not roll back (a ROLLBACK fails when the connection is broken,
 * which `pg` has then closed already; a live one that failed it would keep its transaction open):
 * the pool sees it ended and never hands it out again. `why` is logged by whoever caught it.
 */
export function discardConnection(connection: pg.ClientBase, _why: unknown): Promise<void> {
  return (connection as pg.Client).end().catch(() => undefined);
}

/**
 * Runs one named (prepared once per connection) statement straight on a pooled pg connection,
 * for the statements run for every post or delivery (ingest's store, the delivery consumers'
 * batches): about 25 µs less CPU per call than through knex, and Postgres neither parses nor
 * (once it has settled on a generic plan) plans it again. Its errors carry `backendPid`, the
 * server process that ran it: after a broken connection, the statement is over once that
 * process is gone.
 */
export async function runPrepared<Row>(
  db: Db,
  query: { name: string; text: string; values: unknown[] },
): Promise<Row[]> {
  return withPooledConnection(db, async (connection) => {
    try {
      return (await connection.query(query)).rows as Row[];
    } catch (err) {
      throw withBackendPid(err, connection);
    }
  });
}

/**
 * `err` (a statement's error) with `backendPid`, the server process of `connection` that ran it: after a broken
 * connection, the statement is over once that process is gone.
 */
export function withBackendPid(err: unknown, connection: unknown): unknown {
  if (err && typeof err === 'object')
    Object.assign(err, { backendPid: (connection as { processID?: number }).processID });
  return err;
}

/** Creates the database named in `databaseUrl` when it does not exist (connecting to the `postgres` database to do so). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) return;
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      } catch (err) {
        // Another process created it first.
        if ((err as { code?: string }).code !== '42P04' && (err as { code?: string }).code !== '23505') throw err;
      }
    }
  } finally {
    await client.end();
  }
}

/** Postgres error code for unique violations; repositories translate it into a `conflict` problem. */
export const UNIQUE_VIOLATION = '23505';

/** Postgres error code for foreign-key violations (the referenced row is gone). */
export const FOREIGN_KEY_VIOLATION = '23503';

/**
 * An error Postgres raised for a statement (a constraint, a value, a deadlock, one of our own
 * SQLSTATEs): running the statement again with other values may well succeed. Not: a lost or
 * refused connection, a full pool, a server shutting down, out of resources or broken, or a lock
 * not granted in time (55P03), where another try now only fails (or waits) again.
 */
export function isStatementError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return err instanceof pg.DatabaseError && typeof code === 'string' && !/^(08|53|57|58|XX|55P03)/.test(code);
}

/**
 * Whether a statement that failed with `err` may nevertheless have committed: unless Postgres
 * answered with an error (which rolled it back; a FATAL one may come after a commit, so not that),
 * or no connection was had (a refused connection, a full pool), the connection broke while it was
 * under way and nobody can tell yet.
 */
export function mayHaveCommitted(err: unknown): boolean {
  if (err instanceof pg.DatabaseError) return err.severity === 'FATAL' || err.severity === 'PANIC';
  const e = (err ?? {}) as { code?: unknown; name?: unknown };
  if (e.name === 'KnexTimeoutError') return false;
  return !(e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN');
}

export function isForeignKeyViolation(err: unknown): boolean {
  return (err as { code?: string })?.code === FOREIGN_KEY_VIOLATION;
}

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === UNIQUE_VIOLATION && (constraint === undefined || e.constraint === constraint);
}

// The text Postgres can store.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a client's string cannot be stored as text, or undefined when it can. Two classes are refused
 * wherever input enters (route validation and ingest's parsers):
 * - NUL (U+0000): Postgres `text` cannot hold it and `jsonb` refuses its `\u0000` escape;
 * - an unpaired UTF-16 surrogate: not Unicode at all; `jsonb` refuses its escape and UTF-8 encoding
 *   would silently turn it into U+FFFD, storing something the client did not send.
 * Every other character (other controls, bidi overrides, noncharacters) is storable text and is kept
 * as sent; presenting it safely is the reader's job (the console escapes, exports quote).
 */
export function unstorableText(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain NUL (U+0000)';
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode (it has an unpaired surrogate)';
  return undefined;
}

/** Every string in a parsed value (object keys included) that `unstorableText` refuses, named by its path (FieldErrors). */
export function unstorableFields(
  value: unknown,
  location: string,
  out: { field: string; message: string }[] = [],
): { field: string; message: string }[] {
  if (typeof value === 'string') {
    const why = unstorableText(value);
    if (why) out.push({ field: location, message: why });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => unstorableFields(item, `${location}/${i}`, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const keyWhy = unstorableText(key);
      if (keyWhy) out.push({ field: `${location}/${safeName(key)}`, message: `has a name that ${keyWhy}` });
      else unstorableFields(item, `${location}/${key}`, out);
    }
  }
  return out;
}

/** A name that can be shown in a problem document (and its log line): NULs and lone surrogates replaced. */
export function safeName(name: string): string {
  return name.replaceAll('\u0000', '\\0').replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');
}

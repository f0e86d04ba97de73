import { readFileSync } from 'node:fs';
import {
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  type ConnectionOptions,
  type NatsConnection,
  type JetStreamClient,
  type JetStreamManager,
} from 'nats';

/**
 * The NATS connection of every service and its security: made in the background and replaced when nats.js gives up on
 * it. The streams and consumers a process provisions are in `streams.ts`, trace context in headers in
 * `trace-headers.ts`, batches published in `stream-publisher.ts`.
 */

export interface Nats {
  /** The connection; throws NatsNotConnected until the first connection is made (see `connected`). */
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  /**
   * Resolves once the first connection is made and JetStream answered; rejects (NatsRefused) only when the server
   * refuses this process's credentials or certificate at that first connection, which retrying cannot mend.
   */
  readonly connected: Promise<void>;
  /**
   * Calls `listener` with the connection now (when there is one) and with each new connection that replaces one
   * closed for good (`replacement` true): core subscriptions are made on each. Returns a function that stops it.
   */
  eachConnection(listener: (nc: NatsConnection, replacement: boolean) => void): () => void;
  /**
   * Since when (epoch ms) this process has been cut off in a way that waiting may not mend: NATS refuses its
   * credentials on a reconnect, or its connection was closed for good and no new one is made yet. Undefined while it
   * is connected, or only disconnected (NATS down or unreachable). `/livez` fails once it is old (see mountProbes).
   */
  lostSince(): number | undefined;
  /**
   * Whether this process has a connection to NATS now: made, not disconnected (NATS down, unreachable, a reconnect
   * under way), not refused and not closed. The `intake.nats.connected` gauge.
   */
  isConnected(): boolean;
  /** Drains the connection (closes it once it comes, when it has not yet). */
  close(): Promise<void>;
  /** Subject and stream names, all derived from NATS_PREFIX so test runs never share them. */
  names: NatsNames;
  /** Replicas of the streams and durable consumers this process provisions (NATS_STREAM_REPLICAS). */
  replicas: number;
  /** The streams' bounds (streamLimits); one undefined leaves an existing stream's own as it is. */
  streams: StreamLimits;
}

/** The bounds ensureStreams applies, each only when set (an existing stream keeps its own otherwise). */
export interface StreamLimits {
  /** NATS_EVENTS_MAX_BYTES, else NATS_STREAM_MAX_BYTES. */
  eventsMaxBytes?: number;
  /** NATS_DELIVERIES_MAX_BYTES, else NATS_STREAM_MAX_BYTES. */
  deliveriesMaxBytes?: number;
  /** NATS_EVENTS_MAX_AGE in milliseconds. */
  eventsMaxAgeMs?: number;
}

/** What using NATS before its first connection throws: callers treat it as NATS being down. */
export class NatsNotConnected extends Error {
  constructor() {
    super('NATS is not connected yet');
  }
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

export interface NatsOptions {
  replicas?: number;
  /** The streams' bounds (streamLimits of the settings); none set by default. */
  streams?: StreamLimits;
  /** Credentials and TLS (natsSecurity). */
  security?: Partial<ConnectionOptions>;
  /** Told of each failed attempt at the first connection (it is tried again every 2 s). */
  onConnectError?(err: unknown): void;
  /**
   * Told when the connection is lost in a way waiting may not mend: NATS refused the credentials on a reconnect, or
   * the connection closed for good (a new one is then made); and when it is back (`err` undefined).
   */
  onLost?(what: 'refused' | 'closed' | 'back', err?: unknown): void;
}

type Clients = { nc: NatsConnection; js: JetStreamClient; jsm: JetStreamManager };

/** nats.js's error codes for credentials the server refuses (a status `error` carries the code). */
const REFUSED_CODES = /AUTHORIZATION_VIOLATION|AUTHENTICATION_EXPIRED|ACCOUNT_EXPIRED/;

/**
 * The wait before each reconnect attempt: 0.5 s, growing by a tenth of the time already spent disconnected up to 5 s,
 * ±20 % so that every pod does not knock at once (a server refusing credentials answers each knock with work).
 */
function reconnectDelay(disconnectedAt: number | undefined): number {
  const down = disconnectedAt === undefined ? 0 : Date.now() - disconnectedAt;
  return Math.min(5000, 500 + down / 10) * (0.8 + Math.random() * 0.4);
}

/**
 * Connects in the background and keeps reconnecting forever, to any server of `url` (comma-separated; the servers a
 * cluster announces are added). Returns at once: a process listens and answers what needs no NATS while NATS is
 * down or late; `connected` resolves at the first connection, before which `nc`, `js` and `jsm` throw
 * NatsNotConnected.
 *
 * After the first connection nothing ends it but `close()`: a reconnect NATS refuses (a password rotated out of
 * order, an expired user JWT) is tried again with backoff (nats.js would give up after the same refusal twice:
 * `ignoreAuthErrorAbort`), credential files are read again at each attempt (natsSecurity), and should nats.js close
 * the connection anyway, a new one is made: the consumers and publishers take it up (they ask for `nc`/`js` again
 * after an error, and `eachConnection` renews core subscriptions). `lostSince` tells liveness how long it has lasted.
 */
export function connectNatsInBackground(url: string, prefix: string, name: string, options: NatsOptions = {}): Nats {
  const link = new NatsLink(url, name, options);
  const connected = link.connectFirst();
  const get = (): Clients => {
    if (!link.clients) throw new NatsNotConnected();
    return link.clients;
  };
  return {
    get nc() {
      return get().nc;
    },
    get js() {
      return get().js;
    },
    get jsm() {
      return get().jsm;
    },
    connected,
    eachConnection: (listener) => link.eachConnection(listener),
    lostSince: () => link.lostSince(),
    isConnected: () => link.isConnected(),
    close: () => link.close(),
    names: natsNames(prefix),
    replicas: options.replicas ?? 1,
    streams: options.streams ?? {},
  };
}

/** The connection of the moment, what replaces it when nats.js closes it for good, and since when it is lost. */
class NatsLink {
  clients: Clients | undefined;
  private closing = false;
  private readonly listeners = new Set<(nc: NatsConnection, replacement: boolean) => void>();
  private refusedSince: number | undefined;
  private closedSince: number | undefined;
  /** The connection of the moment is disconnected (between nats.js's `disconnect` and `reconnect`). */
  private disconnected = false;

  constructor(
    private readonly url: string,
    private readonly name: string,
    private readonly options: NatsOptions,
  ) {}

  /** Tries every 2 s until the first connection; rejects (NatsRefused) when the server refuses the credentials. */
  async connectFirst(): Promise<void> {
    for (;;) {
      try {
        const first = await this.open();
        if (this.closing) return void (await first.nc.close());
        return this.adopt(first, false);
      } catch (err) {
        if (this.closing) return;
        const refused = refusal(err);
        if (refused) throw refused;
        this.options.onConnectError?.(err);
        await new Promise((resolve) => setTimeout(resolve, 2000).unref());
      }
    }
  }

  eachConnection(listener: (nc: NatsConnection, replacement: boolean) => void): () => void {
    this.listeners.add(listener);
    if (this.clients) listener(this.clients.nc, false);
    return () => this.listeners.delete(listener);
  }

  lostSince(): number | undefined {
    const times = [this.refusedSince, this.closedSince].filter((t): t is number => t !== undefined);
    return times.length ? Math.min(...times) : undefined;
  }

  isConnected(): boolean {
    const { clients } = this;
    return (
      clients !== undefined &&
      !this.disconnected &&
      this.refusedSince === undefined &&
      this.closedSince === undefined &&
      !clients.nc.isClosed()
    );
  }

  async close(): Promise<void> {
    this.closing = true;
    const { clients } = this;
    if (clients) await clients.nc.drain().catch(() => clients.nc.close());
  }

  /** One connection that reconnects for ever (refusals included, with backoff), and its JetStream clients. */
  private async open(): Promise<Clients> {
    const disconnected: { at?: number } = {};
    const nc = await connect({
      ...this.options.security,
      servers: this.url.split(',').map((s) => s.trim()),
      name: this.name,
      maxReconnectAttempts: -1,
      ignoreAuthErrorAbort: true,
      reconnectDelayHandler: () => reconnectDelay(disconnected.at),
      timeout: 5000,
      noAsyncTraces: true,
    });
    try {
      const opened = { nc, js: nc.jetstream(), jsm: await nc.jetstreamManager({ timeout: 5000 }) };
      void this.watch(nc, disconnected).catch(() => undefined);
      return opened;
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw err;
    }
  }

  /** Follows a connection's status: when it was disconnected (for the backoff), and refusals until it is back. */
  private async watch(nc: NatsConnection, disconnected: { at?: number }): Promise<void> {
    for await (const status of nc.status()) {
      const current = this.clients?.nc === nc;
      if (status.type === 'disconnect') {
        disconnected.at ??= Date.now();
        if (current) this.disconnected = true;
      } else if (status.type === 'reconnect') {
        disconnected.at = undefined;
        if (current) this.disconnected = false;
        if (this.refusedSince !== undefined) this.options.onLost?.('back');
        this.refusedSince = undefined;
      } else if (status.type === 'error' && REFUSED_CODES.test(String(status.data))) {
        if (this.refusedSince === undefined) this.options.onLost?.('refused', status.data);
        this.refusedSince ??= Date.now();
      }
    }
  }

  /** Takes `next` as the connection, and makes a new one should nats.js close it for good. */
  private adopt(next: Clients, replacement: boolean): void {
    this.clients = next;
    this.disconnected = false;
    this.closedSince = undefined;
    this.refusedSince = undefined;
    void next.nc.closed().then((err) => {
      if (this.closing || this.clients !== next) return;
      this.closedSince = Date.now();
      this.options.onLost?.('closed', err);
      void this.replace();
    });
    for (const listener of this.listeners) listener(next.nc, replacement);
  }

  /** A new connection for one closed for good: tried with backoff (1 s doubling to 30 s) until one is made. */
  private async replace(): Promise<void> {
    for (let attempt = 0; !this.closing; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 1000 * 2 ** attempt)).unref());
      if (this.closing) return;
      try {
        const next = await this.open();
        if (this.closing) return void (await next.nc.close());
        this.options.onLost?.('back');
        return this.adopt(next, true);
      } catch (err) {
        if (refusal(err)) this.refusedSince ??= Date.now();
        this.options.onConnectError?.(err);
      }
    }
  }
}

/** The server refused this process's credentials or certificate: a setting is wrong, and retrying will not mend it. */
export class NatsRefused extends Error {
  override name = 'NatsRefused';
}

/** A NatsRefused naming the settings to check, for an error that retrying cannot mend; undefined for any other. */
function refusal(err: unknown): NatsRefused | undefined {
  const code = String((err as { code?: unknown })?.code ?? '');
  const message = String((err as Error)?.message ?? err);
  if (
    /AUTHORIZATION_VIOLATION|AUTHENTICATION_EXPIRED|ACCOUNT_EXPIRED/.test(code) ||
    /authorization violation/i.test(message)
  )
    return new NatsRefused(
      `NATS refused this process's credentials (${message}): check NATS_USER and NATS_PASSWORD, NATS_TOKEN, ` +
        'NATS_CREDS_FILE or NATS_NKEY_SEED_FILE',
    );
  if (/certificate|self.signed|unable to verify|CERT_|ERR_TLS/i.test(`${code} ${message}`))
    return new NatsRefused(
      `The TLS handshake with NATS failed (${message}): check NATS_TLS_CA_FILE (the CA that signed the servers' ` +
        'certificates), NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE, and that NATS_URL names a host in the certificate',
    );
  return undefined;
}

/**
 * The connection options of the NATS settings: one way to authenticate (a user and password, a token, a credentials
 * file, an nkey seed file) and TLS with a private CA and a client certificate. A URL's user and password are not used
 * (nats.js ignores them): set NATS_USER and NATS_PASSWORD.
 */
export function natsSecurity(config: {
  NATS_USER?: string;
  NATS_PASSWORD?: string;
  NATS_TOKEN?: string;
  NATS_CREDS_FILE?: string;
  NATS_NKEY_SEED_FILE?: string;
  NATS_TLS_CA_FILE?: string;
  NATS_TLS_CERT_FILE?: string;
  NATS_TLS_KEY_FILE?: string;
}): Partial<ConnectionOptions> {
  const options: Partial<ConnectionOptions> = {};
  if (config.NATS_USER !== undefined) Object.assign(options, { user: config.NATS_USER, pass: config.NATS_PASSWORD });
  if (config.NATS_TOKEN !== undefined) options.token = config.NATS_TOKEN;
  // Read at each connect (a Secret updated in place, a refreshed user JWT), the last good contents kept when a read
  // fails; the first read is now, so a missing file stops the process at start.
  if (config.NATS_CREDS_FILE !== undefined)
    options.authenticator = credsAuthenticator(rereadFile(config.NATS_CREDS_FILE, (text) => text));
  if (config.NATS_NKEY_SEED_FILE !== undefined)
    options.authenticator = nkeyAuthenticator(rereadFile(config.NATS_NKEY_SEED_FILE, (text) => text.trim()));
  if (config.NATS_TLS_CA_FILE !== undefined || config.NATS_TLS_CERT_FILE !== undefined)
    options.tls = {
      ...(config.NATS_TLS_CA_FILE ? { caFile: config.NATS_TLS_CA_FILE } : {}),
      ...(config.NATS_TLS_CERT_FILE ? { certFile: config.NATS_TLS_CERT_FILE, keyFile: config.NATS_TLS_KEY_FILE } : {}),
    };
  return options;
}

/**
 * A function giving a file's contents (through `shape`) as read now, or as last read when it cannot be read (nats.js
 * closes the connection for good when an authenticator throws); the first read is at once and throws.
 */
function rereadFile(file: string, shape: (text: string) => string): () => Uint8Array {
  const read = (): Uint8Array => new TextEncoder().encode(shape(readFileSync(file, 'utf8')));
  let last = read();
  return () => {
    try {
      last = read();
    } catch {
      // Mid-update or gone: the contents last read.
    }
    return last;
  };
}

/** Connects (connectNatsInBackground) and waits for the first connection. */
export async function connectNats(url: string, prefix: string, name: string, options: NatsOptions = {}): Promise<Nats> {
  const nats = connectNatsInBackground(url, prefix, name, options);
  await nats.connected;
  return nats;
}

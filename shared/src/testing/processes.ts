import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { eventually, startupBudgetMs } from './support';

const run = promisify(execFile);

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** True when something accepts TCP connections on the loopback port. */
export async function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Thrown while waiting for a process that has ended: it will not become ready (see `eventually`'s stopOn). */
export class ProcessEnded extends Error {}

/** A server process of our own for fault tests: it can be stopped and started again on the same port and data. */
export interface OwnServer {
  port: number;
  url: string;
  start(): Promise<void>;
  /** Stops it with `signal` (its own stop signal by default: SIGKILL unless it names another) and waits until its port closes. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Stops it and removes its data. */
  destroy(): Promise<void>;
}

/** A process of our own on `port` with its data under `dir`, started by `start()` (see OwnServer). */
export function ownProcess(props: {
  port: number;
  url: string;
  dir: string;
  command: string;
  args: string[];
  uid?: number;
  gid?: number;
  stopSignal?: NodeJS.Signals;
  ready?: () => Promise<boolean>;
}): OwnServer {
  let child: ChildProcess | undefined;
  // A stop a test did not await (it cuts the server mid-request) must finish before the next
  // start: a second Postgres on the same data directory refuses to run while the first shuts down.
  let stopping: Promise<void> = Promise.resolve();
  const halt = async (signal?: NodeJS.Signals): Promise<void> => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child?.once('exit', r));
    child.kill(signal ?? props.stopSignal ?? 'SIGKILL');
    await exited;
    await eventually(async () => !(await portOpen(props.port)), {
      timeoutMs: 10_000,
      message: `port ${props.port} to close`,
    });
  };
  const stop = (signal?: NodeJS.Signals): Promise<void> => {
    stopping = stopping.catch(() => undefined).then(() => halt(signal));
    return stopping;
  };
  return {
    port: props.port,
    url: props.url,
    async start() {
      await stopping;
      const started = spawn(props.command, props.args, { stdio: 'ignore', uid: props.uid, gid: props.gid });
      child = started;
      await eventually(
        () => {
          // Ended (refused its settings, or killed by the test environment once a hook gave up on it): stop waiting.
          if (started.exitCode !== null || started.signalCode !== null)
            throw new ProcessEnded(`${props.command} exited with ${started.exitCode ?? started.signalCode}`);
          return (props.ready ?? (() => portOpen(props.port)))();
        },
        {
          timeoutMs: startupBudgetMs(),
          message: `${props.command} on port ${props.port}`,
          stopOn: (err) => err instanceof ProcessEnded,
        },
      );
    },
    stop: (signal) => stop(signal),
    async destroy() {
      await stop();
      rmSync(props.dir, { recursive: true, force: true });
    },
  };
}

type ProcessSpec = Omit<Parameters<typeof ownProcess>[0], 'port' | 'dir'>;

/** Starts the process `spec` describes on a free port with a fresh directory `intake-<name>-…` of its own. */
async function startOwnServer(
  name: string,
  spec: (port: number, dir: string) => ProcessSpec | Promise<ProcessSpec>,
): Promise<OwnServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), `intake-${name}-`));
  const server = ownProcess({ port, dir, ...(await spec(port, dir)) });
  await server.start();
  return server;
}

/**
 * nats-server with JetStream on a free port, with its own store directory; `conf` adds to its configuration file
 * (an `authorization` block, a `tls` block).
 */
export async function startNatsServer(options: { conf?: string } = {}): Promise<OwnServer> {
  return startOwnServer('nats', (port, dir) => {
    const url = `nats://127.0.0.1:${port}`;
    if (!options.conf)
      return { url, command: 'nats-server', args: ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir] };
    const file = path.join(dir, 'nats.conf');
    writeFileSync(
      file,
      `listen: "127.0.0.1:${port}"\njetstream { store_dir: ${JSON.stringify(dir)} }\n${options.conf}\n`,
    );
    return { url, command: 'nats-server', args: ['-c', file] };
  });
}

/**
 * A certificate authority of our own and, signed by it, a server certificate for 127.0.0.1 and a client certificate
 * (openssl, PEM files under `dir`).
 */
export async function testCertificates(dir: string) {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Intake test CA',
  );
  for (const [name, subject, extension] of [
    ['server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth'],
    ['client', '/CN=intake', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    writeFileSync(file(`${name}.ext`), `${extension}\n`);
    await openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      subject,
    );
    await openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    );
  }
  return {
    ca: file('ca.pem'),
    server: { cert: file('server.pem'), key: file('server.key') },
    client: { cert: file('client.pem'), key: file('client.key') },
  };
}

/**
 * redis-server on a free port, keeping nothing on disk; with `tls`, TLS only on that port (a `rediss://` URL), and
 * with `password`, `requirepass`.
 */
export async function startRedisServer(
  options: { tls?: { cert: string; key: string; ca: string }; password?: string } = {},
): Promise<OwnServer> {
  return startOwnServer('redis', (port, dir) => {
    const { tls, password } = options;
    const auth = password ? `:${encodeURIComponent(password)}@` : '';
    const listen = tls
      ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.cert, '--tls-key-file', tls.key]
      : ['--port', String(port)];
    return {
      url: `${tls ? 'rediss' : 'redis'}://${auth}127.0.0.1:${port}`,
      command: 'redis-server',
      args: [
        ...listen,
        ...(tls ? ['--tls-ca-cert-file', tls.ca, '--tls-auth-clients', 'no'] : []),
        ...(password ? ['--requirepass', password] : []),
        ...['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      ],
    };
  });
}

function postgresBin(name: string): string {
  const root = '/usr/lib/postgresql';
  const version = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  return path.join(root, version as string, 'bin', name);
}

/**
 * A Postgres cluster of our own (initdb + postgres) on a free port, trust auth, database `intake`; `settings` are
 * given as `-c name=value` (e.g. `ssl=on` and its files, which the postgres user must be able to read).
 */
export async function startPostgres(settings: Record<string, string> = {}): Promise<OwnServer> {
  return startOwnServer('pg', async (port, dir) => {
    const data = path.join(dir, 'data');
    // Postgres refuses to run as root: run it as the postgres user when we are root.
    const user =
      process.getuid?.() === 0
        ? {
            uid: Number((await run('id', ['-u', 'postgres'])).stdout),
            gid: Number((await run('id', ['-g', 'postgres'])).stdout),
          }
        : {};
    if (user.uid !== undefined) await run('chown', ['-R', `${user.uid}:${user.gid}`, dir]);
    await new Promise<void>((resolve, reject) => {
      const init = spawn(
        postgresBin('initdb'),
        ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'],
        { stdio: 'ignore', ...user },
      );
      init.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`initdb exited ${code}`))));
    });
    return {
      url: `postgres://postgres@127.0.0.1:${port}/intake`,
      command: postgresBin('postgres'),
      args: [
        ...['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off'],
        ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      ],
      ...user,
      stopSignal: 'SIGINT' as const,
      ready: () => acceptsQueries(port),
    };
  });
}

async function acceptsQueries(port: number): Promise<boolean> {
  const client = new pg.Client({
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    connectionTimeoutMillis: 1000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

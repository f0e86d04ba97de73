import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@intake/shared/testing';

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** Our own nats-server with JetStream on a free port (never the shared one), restartable on the same port and store. */
export async function ownNats(): Promise<{ url: string; stop(): Promise<void>; start(): Promise<void>; remove(): Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'intake-nats-'));
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
    await eventually(() => accepts(port), { message: 'nats-server listening' });
  };
  const stop = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `nats://127.0.0.1:${port}`, start, stop, remove: async () => (await stop(), rmSync(dir, { recursive: true, force: true })) };
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

/** Our own Postgres cluster on a free port (initdb + pg_ctl, run as the postgres user when we are root). */
export async function ownPostgres(): Promise<{ url: string; stop(): void; remove(): void }> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'intake-pg-'));
  const asPostgres = process.getuid?.() === 0;
  if (asPostgres) chownSync(dir, 101, 104);
  const run = (bin: string, args: string[]) =>
    asPostgres ? execFileSync('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args], { stdio: 'ignore' }) : execFileSync(path.join(PG_BIN, bin), args, { stdio: 'ignore' });
  const data = path.join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  run('pg_ctl', ['-D', data, '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
  const stop = () => {
    try {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // already stopped
    }
  };
  return { url: `postgres://postgres@127.0.0.1:${port}/intake_fault`, stop, remove: () => (stop(), rmSync(dir, { recursive: true, force: true })) };
}

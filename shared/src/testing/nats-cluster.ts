import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection, type StreamInfo } from 'nats';
import { freePort, ownProcess, type OwnServer } from './processes';
import { eventually } from './support';

/** One nats-server of a cluster of our own: its server name, its own store directory. */
export interface ClusterNode extends OwnServer {
  name: string;
  /** Removes its JetStream store (a replaced pod with a new volume); the node must be stopped. */
  wipe(): void;
  running(): boolean;
}

/** A JetStream cluster of nats-server processes on loopback (see `startNatsCluster`). */
export interface NatsCluster {
  nodes: ClusterNode[];
  /** Every node's client URL, comma-separated, as NATS_URL takes them. */
  url: string;
  node(name: string): ClusterNode;
  /** Waits until a meta leader answers JetStream requests (after a start, or when a majority is back). */
  ready(timeoutMs?: number): Promise<void>;
  /** The stream's cluster as its leader reports it (leader name, replicas and whether each is current). */
  streamInfo(stream: string, timeoutMs?: number): Promise<StreamInfo>;
  /** Waits until the stream has a leader and every replica is current (caught up). */
  healthy(stream: string, timeoutMs?: number): Promise<StreamInfo>;
  /** Stops every node and removes every directory. */
  destroy(): Promise<void>;
}

const CLUSTER_NAME = 'intake-faults';

function nodeConfig(props: { name: string; port: number; routePort: number; store: string; routes: number[] }): string {
  return [
    `server_name: ${JSON.stringify(props.name)}`,
    `listen: "127.0.0.1:${props.port}"`,
    `jetstream { store_dir: ${JSON.stringify(props.store)}, max_file_store: 1073741824 }`,
    'cluster {',
    `  name: ${CLUSTER_NAME}`,
    `  listen: "127.0.0.1:${props.routePort}"`,
    `  routes: [${props.routes.map((p) => `"nats-route://127.0.0.1:${p}"`).join(', ')}]`,
    '}',
    '',
  ].join('\n');
}

function natsServerCommand(): string {
  return process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
}

/** `n` distinct free ports: a port freed by one probe may be handed to the next (a node whose two ports collide never starts). */
async function distinctFreePorts(n: number): Promise<number[]> {
  const taken = new Set<number>();
  while (taken.size < n) taken.add(await freePort());
  return [...taken];
}

/**
 * `size` nats-server processes with JetStream (file store, each in a directory of its own) joined
 * by cluster routes, on free loopback ports: what the chart's 3-node NATS StatefulSet is, for the
 * fault tests and the bench. Resolves when JetStream answers.
 */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const root = mkdtempSync(path.join(tmpdir(), 'intake-nats-cluster-'));
  const free = await distinctFreePorts(2 * size);
  const ports = Array.from({ length: size }, (_, i) => [free[2 * i]!, free[2 * i + 1]!]);
  const nodes: ClusterNode[] = ports.map(([port, routePort], i) => {
    const name = `n${i + 1}`;
    const dir = path.join(root, name);
    const store = path.join(dir, 'jetstream');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'nats.conf');
    const routes = ports.filter((_, j) => j !== i).map(([, p]) => p as number);
    writeFileSync(file, nodeConfig({ name, port: port!, routePort: routePort!, store, routes }));
    const server = ownProcess({
      port: port!,
      url: `nats://127.0.0.1:${port}`,
      dir,
      command: natsServerCommand(),
      args: ['-c', file],
    });
    let up = false;
    return {
      ...server,
      name,
      async start() {
        if (up) return;
        await server.start();
        up = true;
      },
      async stop(signal) {
        await server.stop(signal);
        up = false;
      },
      wipe: () => rmSync(store, { recursive: true, force: true }),
      running: () => up,
    };
  });
  const url = nodes.map((n) => n.url).join(',');
  const cluster: NatsCluster = {
    nodes,
    url,
    node(name) {
      const found = nodes.find((n) => n.name === name);
      if (!found) throw new Error(`no node ${name} in the cluster`);
      return found;
    },
    ready: (timeoutMs = 30_000) => withClient(url, (nc) => jetStreamAnswers(nc, timeoutMs)),
    // Right after a node is killed the cluster may take longer than one request's timeout to answer
    // (a leader election on a busy machine): asked again until it does, within the timeout.
    streamInfo: (stream, timeoutMs = 30_000) =>
      withClient(url, (nc) =>
        eventually(async () => (await nc.jetstreamManager({ timeout: 3000 })).streams.info(stream), {
          timeoutMs,
          intervalMs: 250,
          message: `the cluster to answer for ${stream}`,
        }),
      ),
    healthy: (stream, timeoutMs = 60_000) =>
      withClient(url, (nc) =>
        eventually(
          async () => {
            const info = await (await nc.jetstreamManager({ timeout: 3000 })).streams.info(stream);
            const replicas = info.cluster?.replicas ?? [];
            return info.cluster?.leader && replicas.every((r) => r.current && !r.offline) ? info : undefined;
          },
          { timeoutMs, intervalMs: 250, message: `every replica of ${stream} current` },
        ),
      ),
    async destroy() {
      await Promise.all(nodes.map((n) => n.stop('SIGKILL')));
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(nodes.map((n) => n.start()));
    await cluster.ready();
  } catch (err) {
    await cluster.destroy();
    throw err;
  }
  return cluster;
}

async function withClient<T>(url: string, use: (nc: NatsConnection) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: url.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  try {
    return await use(nc);
  } finally {
    await nc.close();
  }
}

async function jetStreamAnswers(nc: NatsConnection, timeoutMs: number): Promise<void> {
  await eventually(
    async () => {
      const jsm = await nc.jetstreamManager({ timeout: 2000 });
      return Boolean(await jsm.getAccountInfo());
    },
    { timeoutMs, intervalMs: 250, message: 'the JetStream cluster to elect a meta leader' },
  );
}

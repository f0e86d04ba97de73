import type Router from '@koa/router';
import type { StreamInfo } from 'nats';
import type { Nats } from '../messaging/nats';
import type { Platform } from './platform';

export type CheckState = 'ok' | 'down' | 'unused';
export type Dependency = 'postgres' | 'nats' | 'redis';

/** `p`, or a rejection with `Error(message)` once `ms` have passed. */
export async function withTimeout<T>(p: Promise<T>, ms: number, message = 'timeout'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Checks each dependency with a short time-out; never throws. */
export async function checkDependencies(
  platform: Pick<Platform, 'db' | 'nats' | 'redis'>,
  which: Dependency[] = ['postgres', 'nats', 'redis'],
): Promise<Record<Dependency, CheckState>> {
  const { redis } = platform;
  // Undefined: not used by this install (no REDIS_URL).
  const checks: Record<Dependency, (() => Promise<unknown>) | undefined> = {
    postgres: () => platform.db.raw('SELECT 1'),
    nats: async () => {
      if (platform.nats.nc.isClosed()) throw new Error('closed');
      await platform.nats.nc.flush();
    },
    redis: redis
      ? async () => {
          if (redis.status !== 'ready') throw new Error(redis.status);
          await redis.ping();
        }
      : undefined,
  };
  const state = async (check: (() => Promise<unknown>) | undefined): Promise<CheckState> =>
    check
      ? withTimeout(check(), 1500).then(
          () => 'ok' as const,
          () => 'down' as const,
        )
      : 'unused';
  const results = await Promise.all(which.map(async (name) => [name, await state(checks[name])] as const));
  return Object.fromEntries(results) as Record<Dependency, CheckState>;
}

/** A JetStream stream as the health check sees it: its replicas, how many are current (the leader among them), and whether they make a quorum. */
export interface StreamHealth {
  stream: string;
  replicas: number;
  current: number;
  leader: string | null;
  quorum: boolean;
}

/**
 * The state of both streams. A stream without a quorum of current replicas has no leader: it
 * takes no publish and delivers nothing (ingest still accepts posts, into the outbox) until enough
 * nodes are back. A stream whose info does not come in time counts as without quorum. Never throws.
 */
export async function checkStreams(nats: Nats, timeoutMs = 1500): Promise<StreamHealth[]> {
  return Promise.all(
    [nats.names.eventsStream, nats.names.deliveriesStream].map(async (stream) => {
      try {
        return { stream, ...streamReplicas(nats, await withTimeout(nats.jsm.streams.info(stream), timeoutMs)) };
      } catch {
        return { stream, replicas: nats.replicas, current: 0, leader: null, quorum: false };
      }
    }),
  );
}

/** A stream's replicas as its info tells them: how many, how many are current (its leader among them), the quorum. */
export function streamReplicas(nats: Nats, info: StreamInfo): Omit<StreamHealth, 'stream'> {
  const replicas = info.config.num_replicas || 1;
  // A single server reports no cluster: it leads its streams itself.
  const leader = info.cluster ? (info.cluster.leader ?? null) : (nats.nc.info?.server_name ?? 'standalone');
  const followers = (info.cluster?.replicas ?? []).filter((r) => r.current && !r.offline).length;
  const current = (leader ? 1 : 0) + followers;
  return { replicas, current, leader, quorum: Boolean(leader) && current > replicas / 2 };
}

/**
 * Kubernetes probes for one service: `/livez` answers 200 while the process runs its event loop, and 503 once NATS
 * has refused its credentials on reconnecting (or its connection has stayed closed for good) for longer than
 * NATS_REFUSED_LIVENESS_SECONDS: it keeps retrying by itself, but a restarted pod reads its Secret again (a password
 * changed in the environment), or stops at start naming the setting, visibly; NATS merely down or unreachable never
 * fails it (a restart would not mend that). `/readyz` answers 200
 * when the pod can answer its requests: Postgres responds and it is not draining (503 otherwise). NATS and Redis are
 * not in it: ingest accepts posts without either (the outbox, the in-process limiter), and a blip of either must not
 * take every pod out of its Service; their state is in `GET /v1/health`, the metrics and the logs.
 */
export function mountProbes(
  router: Router,
  platform: Platform,
  state: { draining: boolean; workers?: 'waiting for NATS' | 'started' },
): void {
  router.get('/livez', (ctx) => {
    const lostSince = platform.nats.lostSince();
    const lostSeconds = lostSince === undefined ? 0 : Math.floor((Date.now() - lostSince) / 1000);
    if (lostSeconds <= platform.config.NATS_REFUSED_LIVENESS_SECONDS) {
      ctx.body = { status: 'ok' };
      return;
    }
    ctx.status = 503;
    ctx.body = { status: 'nats-lost', detail: `NATS refused or closed this process's connection ${lostSeconds} s ago` };
  });
  router.get('/readyz', async (ctx) => {
    const checks = await checkDependencies(platform, ['postgres']);
    const ready = !state.draining && checks.postgres === 'ok';
    ctx.status = ready ? 200 : 503;
    // `workers` says whether the consumers and pumps run yet (they wait for NATS); it does not decide readiness.
    ctx.body = {
      status: ready ? 'ok' : state.draining ? 'draining' : 'unavailable',
      checks,
      ...(state.workers ? { workers: state.workers } : {}),
    };
  });
}

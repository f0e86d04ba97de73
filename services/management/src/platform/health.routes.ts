import { Type } from '@sinclair/typebox';
import { route } from '@intake/shared/http';
import { checkDependencies, checkStreams, type Platform } from '@intake/shared/runtime';

const Check = Type.Union([Type.Literal('ok'), Type.Literal('down')]);
const OptionalCheck = Type.Union([Type.Literal('ok'), Type.Literal('down'), Type.Literal('unused')], {
  description: '`unused` when REDIS_URL is not set (each ingest process then rate-limits on its own)',
});
const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  checks: Type.Object({
    postgres: Check,
    nats: Check,
    redis: OptionalCheck,
    streams: Type.Union([Type.Literal('ok'), Type.Literal('down')], {
      description: "down when a stream has no quorum of current replicas (the cluster's nodes are down or behind)",
    }),
  }),
  time: Type.String({ format: 'date-time' }),
});

/** How long one check's answer serves every request (the route is public: a flood makes one check a second). */
const REUSE_MS = 1000;
const recent = new WeakMap<Platform, { at: number; answer: ReturnType<typeof check> }>();

/**
 * The dependencies' state, checked at most once a second per process: concurrent and following requests share the
 * check under way or just made. The answer is public, so it names nothing of the install: no stream, replica count or
 * NATS node (the metrics port has each stream's replicas, `nats stream info` its leader).
 */
function health(platform: Platform): ReturnType<typeof check> {
  const now = Date.now();
  const last = recent.get(platform);
  if (last && now - last.at < REUSE_MS) return last.answer;
  const answer = check(platform);
  recent.set(platform, { at: now, answer });
  return answer;
}

async function check(platform: Platform) {
  const [dependencies, streams] = await Promise.all([checkDependencies(platform), checkStreams(platform.nats)]);
  const checks = { ...dependencies, streams: streams.every((s) => s.quorum) ? ('ok' as const) : ('down' as const) };
  const ok = Object.values(checks).every((s) => s !== 'down');
  const status = ok ? ('ok' as const) : ('degraded' as const);
  return { ok, body: { status, checks, time: platform.clock.now().toISOString() } };
}

/** `GET /v1/health`: the state of the dependencies, for a monitor. */
export const getHealthRoute = route({
  method: 'GET',
  path: '/v1/health',
  operationId: 'getHealth',
  summary: 'Service health: the state of Postgres, NATS and Redis',
  description:
    'Answers 200 when every dependency responds and both JetStream streams have a quorum of current replicas, and 503 (same body) when not, so a monitor can use the status code alone. Checked at most once a second: requests within that second get the same answer (its `time`). Public, so it names no stream, replica or server: per stream, the metrics have them (`intake.stream.replicas`, `intake.stream.current_replicas`).',
  tags: ['Health'],
  auth: 'none',
  responses: {
    200: { description: 'Everything is up', schema: Health },
    503: { description: 'A dependency is down', schema: Health },
  },
  async handler(ctx, _input, platform: Platform) {
    const { ok, body } = await health(platform);
    ctx.status = ok ? 200 : 503;
    ctx.body = body;
  },
});

/** The health route, as the OpenAPI document lists it. */
export const healthRoutes = [getHealthRoute];

import { Type } from '@sinclair/typebox';
import { checkDependencies, checkStreams, route, type Platform } from '@intake/shared';

const Check = Type.Union([Type.Literal('ok'), Type.Literal('down')]);
const OptionalCheck = Type.Union([Type.Literal('ok'), Type.Literal('down'), Type.Literal('unused')], {
  description: '`unused` when REDIS_URL is not set (each ingest process then rate-limits on its own)',
});
const Stream = Type.Object({
  stream: Type.String({ description: 'the JetStream stream' }),
  replicas: Type.Integer({ description: 'replicas it is configured with (NATS_STREAM_REPLICAS)' }),
  current: Type.Integer({ description: 'replicas up to date, the leader among them' }),
  leader: Type.Union([Type.String(), Type.Null()], { description: 'the node that leads it (null: none)' }),
  quorum: Type.Boolean({ description: 'false: it takes no publish and delivers nothing until nodes return' }),
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
  streams: Type.Array(Stream),
  time: Type.String({ format: 'date-time' }),
});

/** `GET /v1/health`: the state of the dependencies, for a monitor. */
export const getHealthRoute = route({
  method: 'GET',
  path: '/v1/health',
  operationId: 'getHealth',
  summary: 'Service health: the state of Postgres, NATS and Redis',
  description:
    'Answers 200 when every dependency responds and both JetStream streams have a quorum of current replicas, and 503 (same body) when not, so a monitor can use the status code alone.',
  tags: ['Health'],
  auth: 'none',
  responses: {
    200: { description: 'Everything is up', schema: Health },
    503: { description: 'A dependency is down', schema: Health },
  },
  async handler(ctx, _input, platform: Platform) {
    const [dependencies, streams] = await Promise.all([checkDependencies(platform), checkStreams(platform.nats)]);
    const checks = { ...dependencies, streams: streams.every((s) => s.quorum) ? ('ok' as const) : ('down' as const) };
    const ok = Object.values(checks).every((s) => s !== 'down');
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ok' : 'degraded', checks, streams, time: platform.clock.now().toISOString() };
  },
});

/** The health route, as the OpenAPI document lists it. */
export const healthRoutes = [getHealthRoute];

import { Type } from '@sinclair/typebox';
import { checkDependencies, route, type Platform } from '@intake/shared';

const Check = Type.Union([Type.Literal('ok'), Type.Literal('down')]);
const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  checks: Type.Object({ postgres: Check, nats: Check, redis: Check }),
  time: Type.String({ format: 'date-time' }),
});

/** `GET /v1/health`: the state of the dependencies, for a monitor. */
export const getHealthRoute = route({
  method: 'GET',
  path: '/v1/health',
  operationId: 'getHealth',
  summary: 'Service health: the state of Postgres, NATS and Redis',
  description:
    'Answers 200 when every dependency responds and 503 (same body) when one does not, so a monitor can use the status code alone.',
  tags: ['Health'],
  auth: 'none',
  responses: {
    200: { description: 'Everything is up', schema: Health },
    503: { description: 'A dependency is down', schema: Health },
  },
  async handler(ctx, _input, platform: Platform) {
    const checks = await checkDependencies(platform);
    const ok = Object.values(checks).every((s) => s === 'ok');
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ok' : 'degraded', checks, time: platform.clock.now().toISOString() };
  },
});

/** The health route, as the OpenAPI document lists it. */
export const healthRoutes = [getHealthRoute];

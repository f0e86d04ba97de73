import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { Type } from '@sinclair/typebox';
import Ajv from 'ajv';
import { createDb } from '../base/db';
import { openApiOf } from '../testing/openapi-contract';
import { fieldErrors, mountRoutes, route } from './route';

describe('fieldErrors', () => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(
    Type.Object(
      {
        status: Type.Optional(Type.Union([Type.Literal('live'), Type.Literal('paused')])),
        name: Type.String({ minLength: 1 }),
      },
      { additionalProperties: false },
    ),
  );

  it('names each bad field once, folding literal unions into one message', () => {
    validate({ status: 'gone', name: '', extra: true });
    expect(fieldErrors('body', validate.errors)).toEqual([
      { field: 'body/extra', message: 'is not a known field' },
      { field: 'body/status', message: 'must be one of "live", "paused"' },
      { field: 'body/name', message: 'must NOT have fewer than 1 characters' },
    ]);
  });

  it('reports a missing required field by its name', () => {
    validate({});
    expect(fieldErrors('body', validate.errors)).toEqual([{ field: 'body/name', message: 'is required' }]);
  });
});

describe('mountRoutes', () => {
  // Only management routes authenticate; this one never queries.
  const db = createDb('postgres://postgres@127.0.0.1:5432/intake');
  afterAll(() => db.destroy());

  const greet = route({
    method: 'GET',
    path: '/greet/:name',
    operationId: 'greet',
    summary: 'Greets',
    tags: ['Test'],
    auth: 'none',
    params: Type.Object({ name: Type.String({ maxLength: 10 }) }),
    responses: { 200: { description: 'The greeting', schema: Type.Object({ text: Type.String() }) } },
    handler(ctx, { params }, deps: { greeting: string }) {
      ctx.body = { text: `${deps.greeting}, ${params.name}` };
    },
  });

  async function get(deps: { greeting: string }, path: string): Promise<{ status: number; body: unknown }> {
    const router = new Router();
    mountRoutes(router, [greet], { db, deps });
    const app = new Koa();
    app.use(router.routes());
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
      return { status: res.status, body: res.status === 200 ? await res.json() : undefined };
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  it('hands each handler the deps its routes were mounted with, at request time', async () => {
    expect(await get({ greeting: 'Hello' }, '/greet/Ada')).toEqual({ status: 200, body: { text: 'Hello, Ada' } });
    expect(await get({ greeting: 'Bonjour' }, '/greet/Ada')).toEqual({ status: 200, body: { text: 'Bonjour, Ada' } });
  });

  it('the OpenAPI document reads the same definition with no deps at all', () => {
    const doc = openApiOf([greet]) as {
      paths: Record<string, Record<string, { operationId: string; parameters: { name: string }[] }>>;
    };
    expect(doc.paths['/greet/{name}']?.['get']).toMatchObject({
      operationId: 'greet',
      parameters: [{ name: 'name', in: 'path', required: true }],
    });
  });
});

import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import type Koa from 'koa';
import type { KoaRouter as Router } from '@intake/shared/http';
import { loadConfig } from '@intake/shared/base';
import { PROBLEM_SLUGS } from '@intake/shared/contracts';
import { buildServiceApp, type Platform, type ServiceModule } from '@intake/shared/runtime';
import { contractViolations, listen, type OpenApiDoc, useStarted } from '@intake/shared/testing';
import { ingestService } from '@intake/ingest';
import { deliveryService } from '@intake/delivery';
import { usageService } from '@intake/usage';
import { managementService, openApi, openApiDocument } from '../src';
import { routeFor } from '../../../src/all-in-one';
import { api, startManagement } from './helpers';

/** Probes for orchestrators, not part of the public API. */
const INFRASTRUCTURE = new Set(['GET /livez', 'GET /readyz', 'HEAD /livez', 'HEAD /readyz']);

function routerOf(app: Koa): Router {
  const dispatch = app.middleware.find((m) => (m as { router?: Router }).router) as { router: Router } | undefined;
  if (!dispatch) throw new Error('no router mounted');
  return dispatch.router;
}

/** The verdict of swagger-parser on `doc`, `valid` or `invalid: <why>`. */
function validateInPlainNode(doc: OpenApiDoc): Promise<string> {
  // swagger-parser's dependencies are ES modules Jest cannot load: run it in plain Node.
  const script = `require('@apidevtools/swagger-parser')
    .validate(JSON.parse(require('fs').readFileSync(0, 'utf8')))
    .then(() => console.log('valid'), (e) => { console.log('invalid: ' + e.message); process.exitCode = 1; })`;
  return new Promise<string>((resolve) => {
    const child = execFile(process.execPath, ['-e', script], { cwd: __dirname }, (_err, stdout, stderr) =>
      resolve(`${stdout}${stderr}`.trim()),
    );
    child.stdin?.end(JSON.stringify(doc));
  });
}

/** `METHOD /path` of every route the modules register, in OpenAPI's `{param}` form, probes and HEAD left out. */
function registeredRoutes(modules: ServiceModule[], platform: Platform): Set<string> {
  const registered = new Set<string>();
  for (const m of modules) {
    for (const layer of routerOf(buildServiceApp(m, platform)).stack) {
      for (const method of layer.methods) {
        const key = `${method} ${String(layer.path).replace(/:([A-Za-z_]+)/g, '{$1}')}`;
        if (method !== 'HEAD' && !INFRASTRUCTURE.has(key)) registered.add(key);
      }
    }
  }
  return registered;
}

/** Each documented operation, called with placeholder ids through the all-in-one routing, is served by some app. */
async function expectEveryOperationServed(doc: OpenApiDoc, modules: ServiceModule[], platform: Platform) {
  const apps = Object.fromEntries(modules.map((m) => [m.name, buildServiceApp(m, platform).callback()]));
  const server = await listen((req, res) =>
    (apps[routeFor(req.url ?? '/')] as (req: unknown, res: unknown) => void)(req, res),
  );
  try {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        const concrete = path.replace(/\{[^}]+\}/g, 'x1');
        const res = await fetch(`${server.url}${concrete}`, {
          method: method.toUpperCase(),
          headers: { 'content-type': 'application/json' },
          body: ['post', 'patch', 'put'].includes(method) ? '{}' : undefined,
        });
        const body = await res.text();
        expect({
          op: `${method} ${path}`,
          served: res.status !== 405 && !body.includes('Nothing is served at'),
        }).toEqual({ op: `${method} ${path}`, served: true });
      }
    }
  } finally {
    await server.close();
  }
}

/** Every operation has a unique id, a summary, a tag, a 2xx response and a default (problem) response. */
function expectEveryOperationDescribed(doc: OpenApiDoc) {
  const ids = new Set<string>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops) as [
      string,
      { operationId: string; summary: string; tags: string[]; responses: Record<string, unknown> },
    ][]) {
      expect({
        op: `${method} ${path}`,
        ok: Boolean(
          op.operationId &&
          op.summary &&
          op.tags.length &&
          Object.keys(op.responses).some((s) => /^2/.test(s)) &&
          op.responses['default'],
        ),
      }).toEqual({ op: `${method} ${path}`, ok: true });
      expect(ids.has(op.operationId)).toBe(false);
      ids.add(op.operationId);
    }
  }
}

describe('OpenAPI document', () => {
  let ctx: Awaited<ReturnType<typeof startManagement>>;
  let doc: OpenApiDoc & { openapi: string; info: unknown };
  const modules: ServiceModule[] = [ingestService, managementService, deliveryService, usageService];
  beforeAll(async () => {
    ctx = await startManagement();
    doc = (await api(ctx.url)('GET', '/openapi')).body;
  });
  afterAll(() => ctx.close());

  const documented = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));

  it('is OpenAPI 3.1 that a standard validator accepts', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const verdict = await validateInPlainNode(doc);
    expect(verdict).toBe('valid');
  });

  it('documents every route the four services register, and nothing they do not', () => {
    const registered = registeredRoutes(modules, ctx.platform);
    expect([...registered].sort()).toEqual(documented().sort());
    for (const key of [
      'POST /v1/forms',
      'GET /v1/forms/{id}',
      'GET /v1/forms/{id}/submissions',
      'GET /v1/submissions/{id}',
      'GET /v1/forms/{id}/export.csv',
      'GET /v1/api-keys',
      'GET /v1/health',
      'GET /openapi',
      'GET /problems/{slug}',
    ])
      expect(documented()).toContain(key);
  });

  it('serves every documented operation through the all-in-one routing', async () => {
    await expectEveryOperationServed(doc, modules, ctx.platform);
  });

  it('every operation has an id, a summary, a tag, a success response and problem responses', () => {
    expectEveryOperationDescribed(doc);
  });

  it('the contract check catches responses that drift from the document', () => {
    const form = { method: 'GET', path: '/v1/forms/frm_1', contentType: 'application/json' };
    expect(contractViolations(doc, { ...form, status: 200, body: { id: 'frm_1' } }).join()).toMatch(/does not fit/);
    expect(contractViolations(doc, { ...form, status: 200, contentType: 'text/plain', body: 'hi' }).join()).toMatch(
      /content type/,
    );
    expect(
      contractViolations(doc, {
        ...form,
        status: 404,
        contentType: 'application/problem+json',
        body: { type: 'x' },
      }).join(),
    ).toMatch(/does not fit/);
    expect(
      contractViolations(doc, {
        method: 'PUT',
        path: '/v1/forms/frm_1',
        status: 200,
        contentType: null,
        body: undefined,
      }).join(),
    ).toMatch(/not documented/);
    expect(
      contractViolations(doc, {
        ...form,
        status: 404,
        contentType: 'application/problem+json',
        body: { type: 'http://x/problems/not-found', title: 't', status: 404, detail: 'd' },
      }),
    ).toEqual([]);
  });
});

describe('the built OpenAPI document', () => {
  it('takes the server URL and the problem pages’ path from the configuration, as the routes make them for it', () => {
    const config = loadConfig({
      PUBLIC_BASE_URL: 'https://forms.example.org',
      PROBLEMS_URL: 'https://forms.example.org/errors/types',
    });
    const routes = [ingestService, managementService, usageService, deliveryService].flatMap((m) =>
      m.routes({ config }),
    );
    const served = openApi({ config }) as OpenApiDoc & { servers: unknown };
    expect(served.servers).toEqual([{ url: 'https://forms.example.org' }]);
    expect(Object.keys(served.paths)).toEqual(expect.arrayContaining(['/errors/types', '/errors/types/{slug}']));
    // Byte for byte, the order of the paths included.
    expect(JSON.stringify(served)).toBe(JSON.stringify(openApiDocument(config, routes)));
  });
});

describe('docs and problem types', () => {
  const ctx = useStarted(() => startManagement());

  it('serves a self-contained docs page at /docs (no CDN)', async () => {
    const res = await api(ctx.url)('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('fetch("/openapi")');
    expect(res.text).not.toMatch(/<(script|link)[^>]+(src|href)=["']https?:/);
  });

  it('describes every problem type as JSON, and as HTML for browsers', async () => {
    const call = api(ctx.url);
    const list = await call('GET', '/problems');
    expect(list.body.data.map((p: { slug: string }) => p.slug)).toEqual(PROBLEM_SLUGS);
    for (const slug of PROBLEM_SLUGS) {
      const res = await call('GET', `/problems/${slug}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        slug,
        type: `${ctx.platform.config.PROBLEMS_URL}/${slug}`,
        description: expect.stringMatching(/.{40}/),
      });
    }
    // HTML is the browser alternative; the document describes the JSON form
    const html = await api(ctx.url, undefined, { contract: false })('GET', '/problems/quota-exceeded', undefined, {
      accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
    });
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.text).toContain('Monthly submission quota exceeded');
    expect(
      (await api(ctx.url, undefined, { contract: false })('GET', '/problems', undefined, { accept: 'text/html' })).text,
    ).toContain('<table>');
  });

  it.each([
    ['/docs', 'text/html'],
    ['/problems', 'text/html'],
    ['/problems/quota-exceeded', 'text/html'],
  ])('%s carries the console’s CSP and safety headers, allowing only its own inline script and style', async (path) => {
    const res = await fetch(`${ctx.url}${path}`, { headers: { accept: 'text/html' } });
    const html = await res.text();
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    // What a browser checks: each inline block's SHA-256 is listed under its directive.
    for (const [tag, directive] of [
      ['script', 'script-src'],
      ['style', 'style-src'],
    ] as const) {
      const allowed = csp.split('; ').find((d) => d.startsWith(`${directive} `)) ?? '';
      for (const [, text] of html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g')))
        expect(allowed).toContain(
          `'sha256-${createHash('sha256')
            .update(text as string)
            .digest('base64')}'`,
        );
    }
  });

  it('the type of a real problem response resolves; an unknown slug is 404', async () => {
    const unauthorized = await api(ctx.url)('GET', '/v1/forms');
    const path = new URL(unauthorized.body.type).pathname;
    const described = await api(ctx.url)('GET', path);
    expect(described.body.slug).toBe('unauthorized');
    expect((await api(ctx.url)('GET', '/problems/no-such-thing')).status).toBe(404);
  });
});

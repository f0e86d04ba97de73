import { Type } from '@sinclair/typebox';
import { type Config } from '@intake/shared/base';
import { problem, PROBLEM_SLUGS } from '@intake/shared/contracts';
import { route, type RouteList } from '@intake/shared/http';
import { type Platform } from '@intake/shared/runtime';
import { describeProblem, isProblemSlug, problemCatalogue } from './problem-catalogue';
import { consoleCsp, safetyHeaders } from './console-page';
import { docsPage, problemListPage, problemPage } from './docs-page';

const ProblemType = Type.Object({
  slug: Type.Union(PROBLEM_SLUGS.map((s) => Type.Literal(s))),
  type: Type.String({ format: 'uri' }),
  title: Type.String(),
  status: Type.Integer(),
  description: Type.String(),
});

const OpenApi = Type.Object(
  { openapi: Type.Literal('3.1.0'), info: Type.Object({}), paths: Type.Object({}) },
  { additionalProperties: true, description: 'this document' },
);

const TAGS = ['Docs'];
const wantsHtml = (ctx: { accepts(...types: string[]): string | false }) => ctx.accepts('json', 'html') === 'html';

/** An HTML page of ours with the console's safety headers; its own inline script and style are allowed by hash. */
function sendPage(ctx: Parameters<typeof safetyHeaders>[0], html: string, config: Config): void {
  const inline = (tag: string) =>
    [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1] as string);
  safetyHeaders(ctx, consoleCsp(config.PUBLIC_BASE_URL, { scripts: inline('script'), styles: inline('style') }));
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}

/** Where problem types are described: the path of PROBLEMS_URL (`/problems` by default). */
export function problemsPath(problemsUrl: string): string {
  const path = new URL(problemsUrl).pathname.replace(/\/+$/, '');
  return path === '' ? '/problems' : path;
}

/** `GET /openapi`: the document `build` makes, made at the first request and kept. */
function openApiRoute(build: () => Record<string, unknown>) {
  let document: Record<string, unknown> | undefined;
  return route({
    method: 'GET',
    path: '/openapi',
    operationId: 'getOpenApi',
    summary:
      'This OpenAPI 3.1 document: every public endpoint of ingest, management, webhooks, deliveries, API keys, usage and health',
    tags: TAGS,
    auth: 'none',
    responses: { 200: { description: 'The document', schema: OpenApi } },
    handler(ctx) {
      document ??= build();
      ctx.body = document;
    },
  });
}

/** `GET /docs`: a readable reference rendered from `/openapi`. */
export const getDocsRoute = route({
  method: 'GET',
  path: '/docs',
  operationId: 'getDocs',
  summary: 'Readable API reference rendered from `/openapi` (self-contained HTML)',
  tags: TAGS,
  auth: 'none',
  responses: { 200: { description: 'An HTML page', contentType: 'text/html', schema: Type.String() } },
  handler(ctx, _input, { config }: Platform) {
    sendPage(ctx, docsPage('/openapi'), config);
  },
});

/** `GET {problems path}`: every problem type, as JSON or as a page. */
function listProblemTypesRoute(base: string) {
  return route({
    method: 'GET',
    path: base,
    operationId: 'listProblemTypes',
    summary: 'Every problem type (JSON, or HTML when the client prefers `text/html`)',
    tags: TAGS,
    auth: 'none',
    responses: { 200: { description: 'The problem types', schema: Type.Object({ data: Type.Array(ProblemType) }) } },
    handler(ctx, _input, { config }: Platform) {
      const list = problemCatalogue(config.PROBLEMS_URL);
      if (wantsHtml(ctx)) sendPage(ctx, problemListPage(list), config);
      else ctx.body = { data: list };
    },
  });
}

/** `GET {problems path}/:slug`: what one problem type means, as JSON or as a page. */
function getProblemTypeRoute(base: string) {
  return route({
    method: 'GET',
    path: `${base}/:slug`,
    operationId: 'getProblemType',
    summary: 'What one problem type means (JSON, or HTML when the client prefers `text/html`)',
    tags: TAGS,
    auth: 'none',
    params: Type.Object({
      slug: Type.String({ maxLength: 64, description: 'the trailing part of a problem `type`' }),
    }),
    responses: { 200: { description: 'The problem type', schema: ProblemType } },
    problems: ['not-found'],
    handler(ctx, { params }, { config }: Platform) {
      if (!isProblemSlug(params.slug)) throw problem('not-found', `No problem type "${params.slug}"`);
      const described = describeProblem(params.slug, config.PROBLEMS_URL);
      if (wantsHtml(ctx)) sendPage(ctx, problemPage(described), config);
      else ctx.body = described;
    },
  });
}

/**
 * `/openapi`, `/docs` and the problem-type pages, which live under PROBLEMS_URL's path. `document`
 * builds what `/openapi` serves.
 */
export function docsRoutes(config: Config, document: () => Record<string, unknown>): RouteList<Platform> {
  const base = problemsPath(config.PROBLEMS_URL);
  return [openApiRoute(document), getDocsRoute, listProblemTypesRoute(base), getProblemTypeRoute(base)];
}

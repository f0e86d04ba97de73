import type Router from '@koa/router';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import type { Static, TSchema, TObject } from '@sinclair/typebox';
import { type Db, unstorableFields } from '../base/db';
import { authenticateKey, type Principal } from '../auth/api-keys';
import { problem, type FieldError, type ProblemSlug } from '../contracts/problems';
import { TIME_ZONE_FORMAT } from '../contracts/time';
import { requireSession, SESSION_COOKIE } from '../auth/sessions';
import { requiredRole, requireRole, type Role } from '../auth/roles';
import { requireInProjects } from '../auth/projects';

export type Auth = 'management' | 'none';

export interface ResponseDef {
  description: string;
  schema?: TSchema;
  /** Defaults to application/json when a schema is given. */
  contentType?: string;
  /** Other content types the answer may come in (e.g. an HTML page for a browser), each with its schema. */
  alternatives?: Record<string, TSchema>;
  headers?: Record<string, { description: string; schema: TSchema }>;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  principal: Principal;
}

/**
 * One route as a value: what the OpenAPI document reads (method, path, schemas, responses) and the
 * handler. The handler gets its dependencies at request time (`deps`: what the service composed
 * for its process, bound when `mountRoutes` mounts it), so listing routes composes nothing.
 */
export interface RouteDef<
  P extends TObject = TObject,
  Q extends TObject = TObject,
  B extends TSchema = TSchema,
  D = unknown,
> {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Koa-style path: `/v1/forms/:id`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: Auth;
  /**
   * The least role a management route needs (see roles.ts). Unset: GET needs `viewer`, every other
   * method `editor`; routes about keys, members and the audit log set `admin`.
   */
  role?: Role;
  /**
   * True for a route about the whole account (its members, its spam model): a member or key limited to projects is
   * refused it with 403 `forbidden`. Every other route is open to them, for what lies in their projects.
   */
  accountWide?: boolean;
  params?: P;
  query?: Q;
  /** A JSON body, parsed and validated before the handler runs. */
  body?: B;
  /** Documents a body the handler parses itself (ingest's form posts), by content type. */
  requestBody?: { required?: boolean; description?: string; content: Record<string, { schema: TSchema }> };
  /** Keyed by status code, e.g. `201`. Where 204 is the only success, it is the answer unless the handler throws. */
  responses: Record<number, ResponseDef>;
  /** Problem types this route can answer with, documented in the OpenAPI. */
  problems?: ProblemSlug[];
  /** Other media types a problem may be answered in (ingest's HTML page for a browser's refused form post). */
  problemAlternatives?: Record<string, TSchema>;
  /** Hidden routes (internal helpers) are served but left out of the OpenAPI document. */
  hidden?: boolean;
  /**
   * The problem a path parameter that cannot name anything answers with (wrong id prefix or shape,
   * NUL, ...): a 404 before any query. Defaults to `not-found`.
   */
  notFound?: ProblemSlug;
  handler(ctx: Context, input: RouteInput<Static<P>, Static<Q>, Static<B>>, deps: D): Promise<void> | void;
}

/** A service's routes, whose handlers get `D`. */
export type RouteList<D = unknown> = readonly RouteDef<TObject, TObject, TSchema, D>[];

/** What the OpenAPI document reads of a route: everything but its handler. */
export type RouteSpec = Omit<RouteDef, 'handler'>;

/**
 * Identity function that gives a route definition its types: the schemas type the handler's input,
 * and the handler's third parameter (`deps: Platform`, say) types what it needs from its service.
 */
export function route<P extends TObject, Q extends TObject, B extends TSchema, D = unknown>(
  def: RouteDef<P, Q, B, D>,
): RouteDef<TObject, TObject, TSchema, D> {
  return def as unknown as RouteDef<TObject, TObject, TSchema, D>;
}

/** What the routes of one group (a file's, mostly) have in common. */
export type RouteGroup = Pick<RouteDef, 'tags' | 'auth' | 'role' | 'accountWide'>;

/**
 * A `route` for one group: each definition names only what is its own, and may still set a field of the group
 * (a `role` of its own, say).
 */
export function routeGroup(group: RouteGroup) {
  return function groupRoute<P extends TObject, Q extends TObject, B extends TSchema, D = unknown>(
    def: Omit<RouteDef<P, Q, B, D>, keyof RouteGroup> & Partial<RouteGroup>,
  ): RouteDef<TObject, TObject, TSchema, D> {
    return route<P, Q, B, D>({ ...group, ...def });
  };
}

const bodyAjv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: false, strict: false });
const queryAjv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: 'array', strict: false });
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('ajv-formats')(bodyAjv);
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('ajv-formats')(queryAjv);
for (const ajv of [bodyAjv, queryAjv]) ajv.addFormat(TIME_ZONE_FORMAT.name, TIME_ZONE_FORMAT.validate);

/**
 * One entry per bad field. A union (anyOf) yields one error per branch in ajv: those are folded
 * into a single "must be one of ..." (literal unions) or the union's own message.
 */
export function fieldErrors(location: string, errors: ErrorObject[] | null | undefined): FieldError[] {
  const byField = new Map<string, ErrorObject[]>();
  for (const e of errors ?? []) {
    const params = e.params as Record<string, unknown>;
    const extra = params['missingProperty'] ?? params['additionalProperty'];
    const path = [location, ...e.instancePath.split('/').filter(Boolean), ...(extra ? [String(extra)] : [])].join('/');
    byField.set(path, [...(byField.get(path) ?? []), e]);
  }
  return [...byField].map(([field, list]) => {
    const allowed = list
      .filter((e) => e.keyword === 'const')
      .map((e) => JSON.stringify((e.params as { allowedValue: unknown }).allowedValue));
    const first = list.find((e) => e.keyword !== 'anyOf' && e.keyword !== 'const') ?? (list[0] as ErrorObject);
    const message =
      allowed.length > 0 && list.every((e) => e.keyword === 'const' || e.keyword === 'anyOf' || e.keyword === 'type')
        ? `must be one of ${allowed.join(', ')}`
        : first.keyword === 'additionalProperties'
          ? 'is not a known field'
          : first.keyword === 'required'
            ? 'is required'
            : (first.message ?? 'is invalid');
    return { field, message };
  });
}

/**
 * The one boundary every client string passes before a query sees it: text Postgres cannot store
 * or that is not Unicode (NUL, unpaired surrogates; see text.ts), then the schema. Query and body
 * refusals are 422 validation-failed naming each field; see `mountRoutes` for path parameters.
 */
function validator(ajv: Ajv, schema: TSchema | undefined, location: string): (value: unknown) => unknown {
  const validate: ValidateFunction | undefined = schema ? ajv.compile(schema) : undefined;
  return (value) => {
    const unstorable = unstorableFields(value, location);
    const errors =
      unstorable.length > 0 ? unstorable : validate && !validate(value) ? fieldErrors(location, validate.errors) : [];
    if (errors.length > 0)
      throw problem('validation-failed', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
    return value;
  };
}

/** Reads `Authorization: Bearer <key>`; undefined when the header is absent. A malformed header is an invalid key. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw problem('invalid-key', 'The Authorization header must be "Bearer <key>"');
  return match[1];
}

/**
 * Authenticates `Authorization: Bearer svc_mgmt_...` (or a console session cookie, see sessions.ts): 401 without a key,
 * 403 invalid-key when unknown or revoked, 403 insufficient-scope for a submission key.
 */
export async function requireManagementKey(db: Db, ctx: Context): Promise<Principal> {
  const token = bearerToken(ctx.get('authorization'));
  const session = token ? undefined : ctx.cookies.get(SESSION_COOKIE);
  if (session) return requireSession(db, ctx, session);
  if (!token) {
    ctx.set('WWW-Authenticate', 'Bearer');
    throw problem('unauthorized', 'Send a management key as "Authorization: Bearer svc_mgmt_..."');
  }
  const principal = await authenticateKey(db, token);
  if (principal.type !== 'management')
    throw problem('insufficient-scope', 'A submission key can only post to forms; use a management key here');
  return principal;
}

const jsonBody = koaBody({
  json: true,
  urlencoded: false,
  multipart: false,
  text: false,
  jsonLimit: '1mb',
  jsonStrict: true,
  parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never,
});

/**
 * Registers routes on a router: auth, then params/query/body validation, then the handler, which
 * gets `deps` (the service's per-process state). `db` authenticates management keys and sessions.
 */
export function mountRoutes<D>(router: Router, routes: RouteList<D>, options: { db: Db; deps: D }): void {
  for (const def of routes) router.register(def.path, [def.method], [...bodyParsing(def), handling(def, options)]);
}

/** A JSON body's content type check and parser, for a route that takes one. */
function bodyParsing(def: RouteSpec): Middleware[] {
  if (!def.body) return [];
  const contentType: Middleware = async (ctx, next) => {
    const length = Number(ctx.get('content-length') || 0);
    const chunked = Boolean(ctx.get('transfer-encoding'));
    if ((length > 0 || chunked) && !ctx.is('application/json'))
      throw problem('unsupported-media-type', 'Send the body as application/json');
    await next();
  };
  return [contentType, jsonBody as unknown as Middleware];
}

/** Authenticates, validates the input against the route's schemas, and runs the handler with `deps`. */
function handling<D>(def: RouteDef<TObject, TObject, TSchema, D>, options: { db: Db; deps: D }): Middleware {
  const checkParams = validator(queryAjv, def.params, 'params');
  // A path parameter that does not fit its schema (an id of another prefix or shape, a NUL) names
  // nothing that can exist: 404, and no query is made.
  const checkPathParams = (value: unknown) => {
    try {
      return checkParams(value);
    } catch {
      throw problem(def.notFound ?? 'not-found', 'No such resource: the path names nothing that can exist');
    }
  };
  const checkQuery = validator(queryAjv, def.query, 'query');
  const checkBody = validator(bodyAjv, def.body, 'body');
  const needed = requiredRole(def);
  const noContent =
    Object.keys(def.responses)
      .filter((status) => Number(status) < 300)
      .join() === '204';
  return async (ctx) => {
    const principal =
      def.auth === 'management' ? await requireManagementKey(options.db, ctx) : (undefined as unknown as Principal);
    // Before any input is read: a request beyond its role learns nothing and changes nothing.
    if (def.auth === 'management') {
      requireRole(principal.role, needed);
      if (def.accountWide && principal.projectIds !== null)
        throw problem('forbidden', 'This is about the whole account; your role is limited to projects');
    }
    const params = checkPathParams({ ...ctx.params });
    const query = checkQuery({ ...ctx.query });
    const body = def.body ? checkBody(ctx.request.body ?? {}) : undefined;
    if (def.auth === 'management')
      await requireInProjects(options.db, principal, { path: params as Record<string, unknown>, query, body });
    // Set before the handler runs, so what wraps it (the audit trail) sees the success it answers.
    if (noContent) ctx.status = 204;
    await def.handler(ctx, { params, query, body, principal } as RouteInput<never, never, never>, options.deps);
  };
}

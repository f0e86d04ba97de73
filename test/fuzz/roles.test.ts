import { sha256Hex } from '@intake/shared/base';
import { newId, type IdKind } from '@intake/shared/contracts';
import { roleAtLeast, ROLES, type KeyRole, type Role } from '@intake/shared/auth';
import {
  addTestMember,
  createTestPlatform,
  digestOf,
  factories,
  managementKeyWithRole,
  memberSessionHeaders,
  rowsOf,
  uniqueEmail,
  type TestPlatform,
} from '@intake/shared/testing';
import { managementService } from '@intake/management';
import { usageService } from '@intake/usage';
import { accountResources, kindOf, startServers } from './target';

/**
 * Every management and usage route, for every role, generated from the served OpenAPI document (its
 * `x-required-role` on each operation): a route added tomorrow is covered without anyone listing it.
 * Each role calls each operation as a member's console session and, for the roles a key can have, as a
 * management key: roles below the route's get 403 `forbidden` and the database does not change (not even
 * the audit log); the others get past the role check, and almost always a 2xx.
 */
interface Schema {
  type?: string;
  anyOf?: Schema[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  format?: string;
  pattern?: string;
  minimum?: number;
  minLength?: number;
  minItems?: number;
  minProperties?: number;
  default?: unknown;
}
interface Operation {
  'x-required-role'?: Role;
  'x-account-wide'?: boolean;
  parameters?: { name: string; in: string; required?: boolean; schema: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}
/** The caller's own resources by kind, and `session`: the id of the caller's console session, if any. */
type Ids = Partial<Record<IdKind | 'session', string>>;
interface Caller {
  role: Role;
  via: 'key' | 'session';
  headers: Record<string, string>;
  session?: string;
}

let serial = 0;
const SESSION_ID_PATTERN = '^[0-9a-f]{32}$';
/** The id kind a field names (`account_id` → account). */
const toKind = (field: string) =>
  field.replace(/_id$/, '').replace(/_(.)/g, (_m, c: string) => c.toUpperCase()) as IdKind;
/** The least value that fits a schema: required fields only, ids of the caller's own resources, unique names. */
function fitting(schema: Schema, ids: Ids, receiverUrl: string, name = ''): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.anyOf)
    return fitting(schema.anyOf.find((s) => s.type !== 'null') ?? (schema.anyOf[0] as Schema), ids, receiverUrl);
  switch (schema.type) {
    case 'string': {
      const kind = kindOf(schema) ?? (ids[toKind(name)] ? toKind(name) : undefined);
      if (kind) return ids[kind];
      if (schema.pattern === SESSION_ID_PATTERN) return ids.session ?? '0'.repeat(32);
      if (schema.format === 'email') return uniqueEmail('invitee');
      if (schema.format === 'date-time') return new Date().toISOString();
      if (schema.format === 'uri' || (schema.pattern ?? '').includes('https?') || /(^|_)url$/.test(name))
        return `${receiverUrl}?n=${++serial}`;
      return `r${Date.now().toString(36)}${++serial}`.padEnd(schema.minLength ?? 1, 'x');
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () =>
        fitting(schema.items ?? { type: 'string' }, ids, receiverUrl),
      );
    case 'object': {
      const names = [...(schema.required ?? [])];
      // At least `minProperties`: the first optional ones in the order the schema lists them.
      for (const other of Object.keys(schema.properties ?? {}))
        if (names.length < (schema.minProperties ?? 0) && !names.includes(other)) names.push(other);
      return Object.fromEntries(
        names.map((field) => [field, fitting(schema.properties?.[field] ?? {}, ids, receiverUrl, field)]),
      );
    }
    default:
      return null;
  }
}

interface Target {
  platform: TestPlatform;
  url: string;
  receiverUrl: string;
  accountId: string;
  adminKey: string;
  /** A project of the account that holds none of the fresh resources. */
  otherProject: string;
  doc: { paths: Record<string, Record<string, Operation>> };
  summary: string[];
}

/** A fresh set of the account's resources (deleting one in a call leaves the others' fixtures alone). */
async function freshIds(t: Target): Promise<Ids> {
  const { platform, accountId } = t;
  const resources = await accountResources(platform, t.url, t.receiverUrl, {
    id: accountId,
    managementKey: t.adminKey,
  });
  const invitee = await addTestMember(platform.db, accountId, 'viewer', { status: 'invited' });
  const project = newId('project');
  await platform.db('projects').insert({ id: project, account_id: accountId, name: `Fresh ${project}` });
  const savedView = newId('savedView');
  await platform.db('saved_views').insert({
    id: savedView,
    account_id: accountId,
    form_id: resources.form,
    name: 'Fresh',
    filters: JSON.stringify({}),
  });
  await managementKeyWithRole(platform.db, accountId, 'viewer');
  const key = await platform.db('api_keys').where({ account_id: accountId }).orderBy('id', 'desc').first('id');
  return { ...resources, apiKey: key.id, member: invitee.memberId, project, savedView };
}

/** A caller of `role`: a member's session, or a management key (roles a key can have); limited to `projectIds`. */
async function callerOf(t: Target, role: Role, via: 'key' | 'session', projectIds?: string[]): Promise<Caller> {
  if (via === 'key' && role !== 'owner') {
    const key = await managementKeyWithRole(t.platform.db, t.accountId, role as KeyRole, { projectIds });
    return { role, via, headers: { authorization: `Bearer ${key}` } };
  }
  const { memberId } = await addTestMember(t.platform.db, t.accountId, role, { projectIds });
  const headers = await memberSessionHeaders(t.platform.db, t.accountId, memberId);
  const token = /intake_session=(.*)/.exec(headers.cookie)?.[1] ?? '';
  return { role, via, headers: { ...headers }, session: sha256Hex(token).slice(0, 32) };
}

/** What any call could change for the account, the audit log and sessions included. */
function digest(t: Target): Promise<Record<string, string>> {
  const forms = '(select id from forms where account_id = :a)';
  const webhooks = `(select id from webhooks where form_id in ${forms})`;
  return digestOf(
    t.platform.db,
    {
      forms: rowsOf('forms', 'account_id = :a'),
      // What a call sets; not the health the delivery process tallies after an earlier call's attempts, which may land
      // at any moment on a loaded machine (last_success_at, consecutive_failures…).
      webhooks: rowsOf('webhooks', `form_id in ${forms}`, 'id, url, enabled, secret, format, destination, credential'),
      submissions: rowsOf('submissions', 'account_id = :a', 'id, status'),
      deliveries: `(select count(*) from deliveries where webhook_id in ${webhooks})`,
      delivery_attempts: '(select count(*) from delivery_attempts)',
      api_keys: rowsOf('api_keys', 'account_id = :a', 'id, revoked_at, name, role'),
      members: rowsOf('members', 'account_id = :a', 'id, role, status'),
      member_invitations: '(select count(*) from member_invitations)',
      audit_log: '(select count(*) from audit_log where account_id = :a)',
      console_sessions: '(select count(*) from console_sessions where account_id = :a)',
      outbox: '(select count(*) from outbox)',
    },
    { a: t.accountId },
  );
}

async function send(t: Target, method: string, template: string, op: Operation, caller: Caller, ids: Ids) {
  const params = op.parameters ?? [];
  let path = template;
  for (const p of params.filter((x) => x.in === 'path'))
    path = path.replace(`{${p.name}}`, encodeURIComponent(String(fitting(p.schema, ids, t.receiverUrl))));
  const query = new URLSearchParams();
  for (const p of params.filter((x) => x.in === 'query' && x.required && x.schema.default === undefined))
    query.set(p.name, String(fitting(p.schema, ids, t.receiverUrl)));
  const bodySchema = op.requestBody?.content['application/json']?.schema;
  const res = await fetch(`${t.url}${path}${query.size ? `?${query}` : ''}`, {
    method: method.toUpperCase(),
    headers: { ...caller.headers, ...(bodySchema ? { 'content-type': 'application/json' } : {}) },
    body: bodySchema ? JSON.stringify(fitting(bodySchema, ids, t.receiverUrl)) : undefined,
    redirect: 'manual',
  });
  const text = await res.text();
  return {
    status: res.status,
    text,
    type: res.status >= 400 ? (JSON.parse(text) as { type?: string }).type : undefined,
  };
}

function useTarget(): Target {
  const t = { summary: [] as string[] } as Target;
  let servers: Awaited<ReturnType<typeof startServers>>;
  beforeAll(async () => {
    t.platform = await createTestPlatform({ KEY_MINT_LIMIT: 10_000, WEBHOOK_ALLOW_PRIVATE_NETWORKS: true });
    servers = await startServers(t.platform, [managementService, usageService]);
    t.url = servers.url;
    t.receiverUrl = servers.receiverUrl;
    const account = await factories.account(t.platform.db);
    t.accountId = account.id;
    t.adminKey = account.managementKey;
    await addTestMember(t.platform.db, account.id, 'owner');
    t.otherProject = newId('project');
    await t.platform.db('projects').insert({ id: t.otherProject, account_id: account.id, name: 'Another client' });
    t.doc = (await (await fetch(`${t.url}/openapi`)).json()) as Target['doc'];
  });
  afterAll(async () => {
    console.log(
      `What the role test did (allowed callers' statuses, denied callers' forbidden):\n${t.summary.join('\n')}`,
    );
    await servers.close();
    await t.platform.close();
  });
  return t;
}

/** Every role as a member's session, and each role a key can have as a key too. */
const CALLERS: [Role, 'key' | 'session'][] = ROLES.flatMap((role): [Role, 'key' | 'session'][] =>
  role === 'owner'
    ? [[role, 'session']]
    : [
        [role, 'key'],
        [role, 'session'],
      ],
);

/** Calls one operation as every role: the denied first (nothing may change), then the allowed, each on fresh resources. */
async function checkOperation(
  t: Target,
  method: string,
  template: string,
  op: Operation,
  counts: { ok: number; other: string[] },
) {
  const needed = op['x-required-role'] as Role;
  const forbidden = `${t.platform.config.PROBLEMS_URL}/forbidden`;
  for (const [role, via] of CALLERS) {
    // The console's own session routes answer a key with 404: there is no session to show or end.
    if (via === 'key' && (template === '/v1/sessions' || template.startsWith('/v1/sessions/'))) continue;
    const caller = await callerOf(t, role, via);
    const ids = await freshIds(t);
    const before = await digest(t);
    const res = await send(t, method, template, op, caller, { ...ids, session: caller.session });
    const name = `${method.toUpperCase()} ${template} as ${role} ${via} → ${res.status} ${res.text.slice(0, 200)}`;
    if (!roleAtLeast(role, needed)) {
      expect({ name, status: res.status, type: res.type }).toEqual({ name, status: 403, type: forbidden });
      expect({ name, digest: await digest(t) }).toEqual({ name, digest: before });
    } else {
      expect({ name, refused: [401, 403].includes(res.status) }).toEqual({ name, refused: false });
      if (res.status < 400) counts.ok += 1;
      else counts.other.push(name);
    }
  }
}

/** Kinds of ids that lie in a project. */
const SCOPED_KINDS = new Set<IdKind>(['project', 'form', 'submission', 'file', 'webhook', 'delivery', 'savedView']);

/**
 * Calls one operation as viewers and editors limited to projects: limited to the project that holds the fresh
 * resources, a caller is let through as its role is, but refused (403, nothing changed) what is about the whole
 * account; limited to another project, a caller naming those resources in the path gets 404 with nothing changed, and
 * no answer it gets names any of them.
 */
async function checkLimited(
  t: Target,
  method: string,
  template: string,
  op: Operation,
  counts: { ok: number; other: string[]; hidden: number },
) {
  const needed = op['x-required-role'] as Role;
  const forbidden = `${t.platform.config.PROBLEMS_URL}/forbidden`;
  const home = await t.platform.db('projects').where({ account_id: t.accountId, is_default: true }).first('id');
  for (const [role, via, where] of [
    ['viewer', 'key', 'own'],
    ['editor', 'session', 'own'],
    ['viewer', 'session', 'other'],
    ['editor', 'key', 'other'],
  ] as const) {
    if (!roleAtLeast(role, needed)) continue;
    if (via === 'key' && (template === '/v1/sessions' || template.startsWith('/v1/sessions/'))) continue;
    const caller = await callerOf(t, role, via, [where === 'own' ? home.id : t.otherProject]);
    // The project named is the one that holds the resources: the own callers', not the others'.
    const ids = { ...(await freshIds(t)), project: home.id };
    const before = await digest(t);
    const res = await send(t, method, template, op, caller, { ...ids, session: caller.session });
    const name = `${method.toUpperCase()} ${template} as ${role} ${via} limited to the ${where} project → ${res.status} ${res.text.slice(0, 200)}`;
    if (op['x-account-wide']) {
      expect({ name, status: res.status, type: res.type }).toEqual({ name, status: 403, type: forbidden });
      expect({ name, digest: await digest(t) }).toEqual({ name, digest: before });
    } else if (where === 'own') {
      const refused = [401, 403].includes(res.status) || /projects you can see/.test(res.text);
      expect({ name, refused }).toEqual({ name, refused: false });
      if (res.status < 400) counts.ok += 1;
      else counts.other.push(name);
    } else {
      const pathKinds = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => kindOf(p.schema));
      if (pathKinds.some((kind) => kind && SCOPED_KINDS.has(kind))) {
        expect({ name, status: res.status, hidden: /projects you can see/.test(res.text) }).toEqual({
          name,
          status: 404,
          hidden: true,
        });
        expect({ name, digest: await digest(t) }).toEqual({ name, digest: before });
        counts.hidden += 1;
      }
      const named = [ids.form, ids.submission, ids.file, ids.webhook, ids.delivery, home.id].filter((id) =>
        res.text.includes(id as string),
      );
      expect({ name, named }).toEqual({ name, named: [] });
    }
  }
}

describe('every management and usage route, for every role (generated from /openapi)', () => {
  const t = useTarget();

  it('documents a required role on every authenticated operation, by the rule: reads viewer, changes editor, unless the route says', () => {
    const roles = Object.entries(t.doc.paths).flatMap(([p, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op['x-required-role'])
        .map(([m, op]) => [`${m} ${p}`, op['x-required-role']] as const),
    );
    expect(roles.length).toBeGreaterThan(30);
    const of = Object.fromEntries(roles);
    expect(of).toMatchObject({
      'get /v1/forms': 'viewer',
      'get /v1/members': 'viewer',
      'get /v1/usage': 'viewer',
      'get /v1/forms/{id}/export.csv': 'viewer',
      'post /v1/forms': 'editor',
      'patch /v1/webhooks/{id}': 'editor',
      'post /v1/deliveries/{id}/replay': 'editor',
      'post /v1/api-keys': 'admin',
      'get /v1/api-keys': 'admin',
      'post /v1/members': 'admin',
      'get /v1/audit-log': 'admin',
      'delete /v1/sessions/current': 'viewer',
    });
    // No change is open to a viewer, whoever adds it, except ending one's own session.
    for (const [op, role] of roles)
      if (
        !op.startsWith('get ') &&
        !['delete /v1/sessions/current', 'delete /v1/sessions/{id}', 'post /v1/sessions/switch'].includes(op)
      )
        expect([op, role]).not.toEqual([op, 'viewer']);
  });

  it('refuses every role below the route’s with 403 forbidden, changing nothing, and lets the others through', async () => {
    const counts = { ok: 0, other: [] as string[] };
    for (const [template, ops] of Object.entries(t.doc.paths))
      for (const [method, op] of Object.entries(ops))
        if (op['x-required-role']) await checkOperation(t, method, template, op, counts);
    t.summary.push(
      `  allowed calls answered 2xx/3xx: ${counts.ok}`,
      ...counts.other.map((o) => `  allowed but refused by input: ${o}`),
    );
    // The generated requests fit their schemas: nearly every allowed call succeeds.
    expect(counts.other.length).toBeLessThanOrEqual(Math.ceil(counts.ok / 20));
  }, 300_000);

  it('lets a viewer or editor limited to projects reach only what lies in them, and nothing about the whole account', async () => {
    const counts = { ok: 0, other: [] as string[], hidden: 0 };
    for (const [template, ops] of Object.entries(t.doc.paths))
      for (const [method, op] of Object.entries(ops))
        if (op['x-required-role']) await checkLimited(t, method, template, op, counts);
    t.summary.push(
      `  limited to the resources' project, allowed calls answered 2xx/3xx: ${counts.ok}`,
      ...counts.other.map((o) => `  allowed but refused by input: ${o}`),
      `  limited to another project, calls naming those resources answered 404: ${counts.hidden}`,
    );
    expect(counts.other.length).toBeLessThanOrEqual(Math.ceil(counts.ok / 20));
    expect(counts.hidden).toBeGreaterThan(20);
  }, 300_000);
});

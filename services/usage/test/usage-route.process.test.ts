import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { newId } from '@intake/shared/contracts';
import { eventually, factories, managementKeyWithRole, openApiOf } from '@intake/shared/testing';
import { usageService } from '../src';
import { api, manualClock, processedCount, startUsage, type UsageHarness } from './helpers';

/** @apidevtools/swagger-parser is ESM-only, which Jest's CommonJS runtime cannot load: it judges the document in a child node. */
async function validateOpenApi(doc: unknown): Promise<void> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'usage-openapi-')), 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  const script = `import SwaggerParser from '@apidevtools/swagger-parser'; await SwaggerParser.validate(${JSON.stringify(file)});`;
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: __dirname });
}

const clock = manualClock('2030-01-31T23:00:00.000Z');
let h: UsageHarness;
beforeAll(async () => {
  h = await startUsage({ clock });
});
afterAll(() => h.close());

async function settled(eventIds: string[]) {
  await eventually(() => processedCount(h.platform, eventIds).then((c) => c === eventIds.length), {
    message: 'events counted',
  });
}

/** Three January submissions (one with a file, one spam on the other form) and one at February's first instant. */
async function submitAroundJanuary(accountId: string, formId: string, otherFormId: string) {
  return [
    await factories.submission(h.platform, {
      accountId,
      formId,
      receivedAt: new Date('2030-01-02T10:00:00.000Z'),
      files: [{ field: 'cv', filename: 'cv.pdf', contentType: 'application/pdf', size: 2048 }],
    }),
    await factories.submission(h.platform, {
      accountId,
      formId,
      receivedAt: new Date('2030-01-31T23:59:59.999Z'),
    }),
    await factories.submission(h.platform, {
      accountId,
      formId: otherFormId,
      receivedAt: new Date('2030-01-31T12:00:00.000Z'),
      status: 'spam',
    }),
    // One millisecond later it is February (UTC): counted there, not in January.
    await factories.submission(h.platform, {
      accountId,
      formId,
      receivedAt: new Date('2030-02-01T00:00:00.000Z'),
    }),
  ];
}

describe('GET /v1/usage: what works', () => {
  it('reports plan, period, limit, used, remaining, spam, bytes, per-form and per-day counts; a new month starts at zero', async () => {
    const { db } = h.platform;
    const account = await factories.account(db, { plan: 'pro', quota: 50 });
    const form = await factories.form(db, account.id, { slug: `contact-${Date.now()}` });
    const other = await factories.form(db, account.id);
    clock.set('2030-01-31T23:00:00.000Z');
    const events = await submitAroundJanuary(account.id, form.id, other.id);
    await settled(events.map((e) => e.eventId));

    const call = api(h.url, account.managementKey);
    const jan = await call('/v1/usage');
    expect(jan.status).toBe(200);
    expect(jan.body).toMatchObject({
      account_id: account.id,
      plan: { id: 'pro', name: 'Pro' },
      period: { month: '2030-01', start: '2030-01-01T00:00:00.000Z', end: '2030-02-01T00:00:00.000Z' },
      limit: 50,
      used: 2,
      remaining: 48,
      spam: 1,
      file_bytes: 2048,
      stored_file_bytes: 2048,
    });
    expect(jan.body.forms).toEqual(
      expect.arrayContaining([
        { form_id: form.id, name: 'Test form', slug: form.slug, project: null, received: 2, spam: 0, file_bytes: 2048 },
        { form_id: other.id, name: 'Test form', slug: other.slug, project: null, received: 0, spam: 1, file_bytes: 0 },
      ]),
    );
    expect(jan.body.forms).toHaveLength(2);
    expect(jan.body.days).toHaveLength(31);
    expect(jan.body.days[1]).toEqual({ date: '2030-01-02', received: 1, spam: 0, file_bytes: 2048 });
    expect(jan.body.days[30]).toEqual({ date: '2030-01-31', received: 1, spam: 1, file_bytes: 0 });
    expect(jan.body.days.reduce((n: number, d: { received: number }) => n + d.received, 0)).toBe(jan.body.used);

    // The clock crosses into February: no job ran, the period key alone starts the month over.
    clock.set('2030-02-01T00:00:00.001Z');
    const feb = await call('/v1/usage');
    expect(feb.body).toMatchObject({
      period: { month: '2030-02', start: '2030-02-01T00:00:00.000Z', end: '2030-03-01T00:00:00.000Z' },
      limit: 50,
      used: 1,
      remaining: 49,
      spam: 0,
      file_bytes: 0,
      stored_file_bytes: 2048,
    });
    expect(feb.body.days).toHaveLength(28);
    clock.set('2030-03-15T00:00:00.000Z');
    expect((await call('/v1/usage')).body).toMatchObject({
      period: { month: '2030-03' },
      used: 0,
      remaining: 50,
      spam: 0,
      forms: [],
    });

    // Any month can be asked for.
    expect((await call('/v1/usage?month=2030-01')).body).toMatchObject({
      period: { month: '2030-01' },
      used: 2,
      spam: 1,
    });
  });

  it('uses the plan’s quota without an override, and never reports remaining below zero', async () => {
    const { db } = h.platform;
    const account = await factories.account(db, { plan: 'free' });
    await db('usage_counters').insert({ account_id: account.id, period: '2030-03-01', used: 130 });
    clock.set('2030-03-15T00:00:00.000Z');
    expect((await api(h.url, account.managementKey)('/v1/usage')).body).toMatchObject({
      plan: { id: 'free' },
      limit: 100,
      used: 130,
      remaining: 0,
    });
  });
});

describe('GET /v1/usage of a project', () => {
  it('counts that project’s forms (asked for with project_id, or a limited key’s own), used included, the quota staying the account’s', async () => {
    const { db } = h.platform;
    const account = await factories.account(db, { plan: 'pro', quota: 50 });
    const client = newId('project');
    await db('projects').insert({ id: client, account_id: account.id, name: 'Client' });
    const form = await factories.form(db, account.id);
    const theirs = await factories.form(db, account.id, { project_id: client });
    clock.set('2030-01-31T23:00:00.000Z');
    const events = await submitAroundJanuary(account.id, form.id, theirs.id);
    await settled(events.map((e) => e.eventId));

    // The other project's two received submissions count toward the account's quota, not toward this report's used.
    const expected = {
      limit: 50,
      used: 0,
      remaining: 48,
      spam: 1,
      file_bytes: 0,
      stored_file_bytes: 0,
      project_ids: [client],
      // Each form named with its project (the client), null in the account's default project.
      forms: [
        {
          form_id: theirs.id,
          name: 'Test form',
          slug: theirs.slug,
          project: { id: client, name: 'Client' },
          received: 0,
          spam: 1,
          file_bytes: 0,
        },
      ],
    };
    // The consumer rolls each batch up per project too, for the dashboards.
    const rolled = await db('usage_daily_projects').where({ account_id: account.id, project_id: client });
    expect(rolled.map((r) => [r.received, r.spam])).toEqual([[0, 1]]);
    const asked = await api(h.url, account.managementKey)(`/v1/usage?month=2030-01&project_id=${client}`);
    expect(asked.body).toMatchObject(expected);
    const limited = await managementKeyWithRole(db, account.id, 'viewer', { projectIds: [client] });
    expect((await api(h.url, limited)('/v1/usage?month=2030-01')).body).toMatchObject(expected);
    const home = await db('projects').where({ account_id: account.id, is_default: true }).first('id');
    expect((await api(h.url, limited)(`/v1/usage?project_id=${home.id}`)).status).toBe(404);
    const whole = (await api(h.url, account.managementKey)('/v1/usage?month=2030-01')).body;
    expect(whole).toMatchObject({ used: 2, remaining: 48, spam: 1, file_bytes: 2048, project_ids: null });
    expect(whole.forms.map((f: { form_id: string; project: unknown }) => [f.form_id, f.project])).toEqual(
      [
        [form.id, null],
        [theirs.id, { id: client, name: 'Client' }],
      ].sort(([a], [b]) => String(a).localeCompare(String(b))),
    );
  });

  it('answers 404 for a project of another account, to a principal of the whole account too', async () => {
    const { db } = h.platform;
    const mine = await factories.account(db);
    const theirs = await factories.account(db);
    const theirProject = await db('projects').where({ account_id: theirs.id, is_default: true }).first('id');
    const res = await api(h.url, mine.managementKey)(`/v1/usage?project_id=${theirProject.id}`);
    expect({ status: res.status, type: res.body.type }).toEqual({
      status: 404,
      type: expect.stringMatching(/not-found$/),
    });
    expect((await api(h.url, mine.managementKey)(`/v1/usage?project_id=${newId('project')}`)).status).toBe(404);
  });
});

describe('GET /v1/usage: its description', () => {
  it('is described in the OpenAPI document, which a standard validator accepts', async () => {
    const doc = openApiOf(usageService.routes(h.platform));
    await validateOpenApi(doc);
    const op = (
      doc.paths as Record<
        string,
        Record<
          string,
          {
            operationId: string;
            security: unknown;
            parameters: { name: string }[];
            responses: Record<
              string,
              { content?: Record<string, { schema: { properties: Record<string, unknown> } }> }
            >;
          }
        >
      >
    )['/v1/usage']!['get']!;
    expect(op.operationId).toBe('getUsage');
    expect(op.security).toEqual([{ managementKey: [] }, { consoleSession: [] }]);
    expect(op.parameters.map((p) => p.name)).toEqual(['month', 'project_id']);
    expect(Object.keys(op.responses['200']!.content!['application/json']!.schema.properties)).toEqual(
      expect.arrayContaining([
        'plan',
        'period',
        'limit',
        'used',
        'remaining',
        'spam',
        'file_bytes',
        'stored_file_bytes',
        'forms',
        'days',
      ]),
    );
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403', '422']));
  });
});

describe('GET /v1/usage: what errors', () => {
  it.each(['2030-13', '2030-1', 'january', '2030-01-01'])(
    'answers 422 validation-failed for month=%s',
    async (month) => {
      const account = await factories.account(h.platform.db);
      const res = await api(h.url, account.managementKey)(`/v1/usage?month=${month}`);
      expect(res.status).toBe(422);
      expect(res.type).toMatch(/application\/problem\+json/);
      expect(res.body).toMatchObject({
        type: expect.stringMatching(/\/validation-failed$/),
        errors: [{ field: 'query/month' }],
      });
    },
  );

  it('answers 405 for other methods', async () => {
    const account = await factories.account(h.platform.db);
    const res = await fetch(`${h.url}/v1/usage`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${account.managementKey}` },
    });
    expect(res.status).toBe(405);
  });
});

describe('GET /v1/usage: what must be refused', () => {
  it('answers 401 without a key, 403 invalid-key for a revoked or unknown key, 403 insufficient-scope for a submission key', async () => {
    const { db } = h.platform;
    const account = await factories.account(db);
    expect((await api(h.url)('/v1/usage')).status).toBe(401);
    const revoked = await factories.apiKey(db, account.id, 'management', { revoked: true });
    expect((await api(h.url, revoked)('/v1/usage')).body).toMatchObject({
      status: 403,
      type: expect.stringMatching(/\/invalid-key$/),
    });
    expect((await api(h.url, 'svc_mgmt_nope')('/v1/usage')).body).toMatchObject({
      status: 403,
      type: expect.stringMatching(/\/invalid-key$/),
    });
    const submissionKey = await factories.apiKey(db, account.id, 'submission');
    expect((await api(h.url, submissionKey)('/v1/usage')).body).toMatchObject({
      status: 403,
      type: expect.stringMatching(/\/insufficient-scope$/),
    });
  });

  it('shows only the caller’s own account', async () => {
    const { db } = h.platform;
    clock.set('2030-04-10T00:00:00.000Z');
    const mine = await factories.account(db);
    const theirs = await factories.account(db);
    const theirForm = await factories.form(db, theirs.id);
    const e = await factories.submission(h.platform, { accountId: theirs.id, formId: theirForm.id });
    await settled([e.eventId]);
    const res = await api(h.url, mine.managementKey)('/v1/usage?account_id=' + theirs.id);
    expect(res.body).toMatchObject({ account_id: mine.id, used: 0, forms: [] });
    expect((await api(h.url, theirs.managementKey)('/v1/usage')).body).toMatchObject({
      account_id: theirs.id,
      used: 1,
    });
  });
});

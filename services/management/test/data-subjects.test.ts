import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { factories, useStarted } from '@intake/shared/testing';
import { drainSearchBacklog } from '../src/submissions/search-indexer';
import { api, ownerWithForm, startManagement } from './helpers';

const ADA = 'ada@example.test';

/**
 * An owner with two forms, the second in the project “Acme Dental”: Ada posted to both (her address in different
 * fields and cases), Bob to one. Her first post is in the search index; the others still wait for the indexer
 * (migration 024): a request must find both kinds.
 */
async function adaAndBob(ctx: Parameters<typeof ownerWithForm>[0]) {
  const owner = await ownerWithForm(ctx);
  const client = await factories.project(ctx.platform.db, owner.account.id, 'Acme Dental');
  const second = await factories.form(ctx.platform.db, owner.account.id, { project_id: client.id });
  const first = await owner.submit({
    payload: { message: 'Hi', name: 'Ada', email: ` Ada@Example.TEST `, z: 'last' },
    files: [{ content: 'her cv', filename: 'cv.pdf', field: 'cv' }],
    receivedAt: new Date(Date.now() - 60_000),
  });
  await drainSearchBacklog(ctx.platform.db);
  const other = await factories.submission(ctx.platform, {
    accountId: owner.account.id,
    formId: second.id,
    payload: { contact: ADA },
  });
  const bob = await owner.submit({ payload: { email: 'bob@example.test', note: `not ${ADA} herself` } });
  return { ...owner, client, first, other, bob };
}

const ctx = useStarted(() => startManagement());

describe('data-subject requests, what works', () => {
  it('finds every submission of the account in which a field value is the address, trimmed and in any case', async () => {
    const { call, first, other, client } = await adaAndBob(ctx);
    // Another account's submission with her address is not this owner's.
    const stranger = await ownerWithForm(ctx);
    await stranger.submit({ payload: { email: ADA } });

    const { status, body } = await call(
      'GET',
      `/v1/data-subjects/submissions?email=${encodeURIComponent('ADA@example.test')}`,
    );
    expect(status).toBe(200);
    expect(body.data.map((s: { id: string }) => s.id)).toEqual([other.id, first.id]);
    // Each names its form, and the form's project unless that is the account's default.
    expect(body.data).toEqual([
      {
        id: other.id,
        form_id: expect.stringMatching(/^frm_/),
        form_name: 'Test form',
        project: { id: client.id, name: 'Acme Dental' },
        received_at: expect.any(String),
        status: 'received',
      },
      expect.objectContaining({ id: first.id, form_name: 'Test form', project: null }),
    ]);
  });

  it('exports them as NDJSON with the payload in posted order and file links that download', async () => {
    const { call, first, other, client } = await adaAndBob(ctx);
    const res = await call('GET', `/v1/data-subjects/export?email=${ADA}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = res.text.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    const line = lines[1] as string;
    // Posted order kept (jsonb would sort the keys shortest first).
    expect(line).toContain(`"payload":{"message":"Hi","name":"Ada","email":" Ada@Example.TEST ","z":"last"}`);
    const parsed = JSON.parse(line);
    expect(parsed).toMatchObject({
      id: first.id,
      form_name: 'Test form',
      project: null,
      status: 'received',
      files: [{ field: 'cv', filename: 'cv.pdf' }],
    });
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: other.id, project: { id: client.id, name: 'Acme Dental' } });
    const download = await fetch(parsed.files[0].url.replace(ctx.platform.config.PUBLIC_BASE_URL, ctx.url));
    expect(await download.text()).toBe('her cv');
  });

  it('erases them as retention does (files first) and answers how many; the others stay', async () => {
    const { call, first, other, bob } = await adaAndBob(ctx);
    const file = path.join(ctx.platform.config.FILES_DIR, first.files[0]!.storage_key);
    expect(existsSync(file)).toBe(true);

    const { status, body } = await call('DELETE', `/v1/data-subjects?email=${ADA}`);
    expect({ status, body }).toEqual({ status: 200, body: { deleted: 2 } });
    expect(existsSync(file)).toBe(false);
    expect(await ctx.platform.db('submissions').whereIn('id', [first.id, other.id, bob.id]).pluck('id')).toEqual([
      bob.id,
    ]);
    expect(await ctx.platform.db('submission_files').where({ submission_id: first.id })).toEqual([]);
    // Nothing she said stays findable: the indexed one's keys and address went with it.
    expect(await ctx.platform.db('submission_search').whereIn('submission_id', [first.id, other.id])).toEqual([]);
    expect((await call('DELETE', `/v1/data-subjects?email=${ADA}`)).body).toEqual({ deleted: 0 });
  });
});

describe('data-subject requests for one client', () => {
  it('an editor limited to a client finds, exports and erases that client’s submissions only', async () => {
    const { call, client, first, other } = await adaAndBob(ctx);
    const { body: minted } = await call('POST', '/v1/api-keys', {
      type: 'management',
      role: 'editor',
      project_ids: [client.id],
    });
    const clients = api(ctx.url, minted.key);
    const found = await clients('GET', `/v1/data-subjects/submissions?email=${ADA}`);
    expect(found.status).toBe(200);
    expect(found.body.data.map((s: { id: string }) => s.id)).toEqual([other.id]);
    const exported = await clients('GET', `/v1/data-subjects/export?email=${ADA}`);
    expect(
      exported.text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual([other.id]);
    const erased = await clients('DELETE', `/v1/data-subjects?email=${ADA}`);
    expect(erased.body).toEqual({ deleted: 1 });
    // The default project's submission is not the client's: it stays, and the owner still finds it.
    expect(await ctx.platform.db('submissions').whereIn('id', [first.id, other.id]).pluck('id')).toEqual([first.id]);
    const rest = await call('GET', `/v1/data-subjects/submissions?email=${ADA}`);
    expect(rest.body.data.map((s: { id: string }) => s.id)).toEqual([first.id]);
  });

  it('the whole account asks for one client with project_id', async () => {
    const { call, client, other } = await adaAndBob(ctx);
    const found = await call('GET', `/v1/data-subjects/submissions?email=${ADA}&project_id=${client.id}`);
    expect(found.body.data.map((s: { id: string }) => s.id)).toEqual([other.id]);
    const workbook = await call('GET', `/v1/data-subjects/export.xlsx?email=${ADA}&project_id=${client.id}`);
    expect(workbook.status).toBe(200);
  });
});

describe('data-subject requests: matching and the audit log', () => {
  it('finds, exports and erases a submission whose only trace of the address is its _replyto control field', async () => {
    const owner = await ownerWithForm(ctx);
    const address = `replyto-${Date.now()}@example.test`;
    const directions = { subject: 'Call me', reply_to: address };
    // One indexed (the indexer read its directions), one still waiting for the indexer (read row by row).
    const indexed = await owner.submit({ payload: { message: 'Hi' }, directions });
    await drainSearchBacklog(ctx.platform.db);
    const waiting = await owner.submit({ payload: { message: 'Again' }, directions });
    const found = await owner.call('GET', `/v1/data-subjects/submissions?email=${encodeURIComponent(address)}`);
    expect(found.body.data.map((s: { id: string }) => s.id)).toEqual([waiting.id, indexed.id]);
    const exported = await owner.call('GET', `/v1/data-subjects/export?email=${encodeURIComponent(address)}`);
    const lines = exported.text
      .trimEnd()
      .split('\n')
      .map((l: string) => JSON.parse(l));
    expect(lines.map((l: { directions: unknown; payload: unknown }) => [l.payload, l.directions])).toEqual([
      [{ message: 'Again' }, directions],
      [{ message: 'Hi' }, directions],
    ]);
    const erased = await owner.call('DELETE', `/v1/data-subjects?email=${encodeURIComponent(address)}`);
    expect(erased.body).toEqual({ deleted: 2 });
  });

  it.each([
    ['a tab', '\t'],
    ['a line break', '\n'],
    ['a no-break space', '\u00a0'],
    ['an em space', '\u2003'],
    ['an ideographic space', '\u3000'],
    ['a byte-order mark', '\ufeff'],
  ])('finds an address posted with %s around it, as the API trims the one it is asked for', async (_what, space) => {
    const { call, submit } = await ownerWithForm(ctx);
    const posted = await submit({ payload: { email: `${space}Ada@Example.TEST${space}` } });
    const found = await call('GET', `/v1/data-subjects/submissions?email=${encodeURIComponent(ADA)}`);
    expect(found.body.data.map((r: { id: string }) => r.id)).toEqual([posted.id]);
  });

  it('audits the lookup, the export and the erasure: who asked, the address as a hash, and how many', async () => {
    const { call, account } = await adaAndBob(ctx);
    expect((await call('GET', `/v1/data-subjects/submissions?email=${ADA}`)).status).toBe(200);
    expect((await call('GET', `/v1/data-subjects/export?email=${ADA}`)).status).toBe(200);
    expect((await call('DELETE', `/v1/data-subjects?email=${ADA.toUpperCase()}`)).body).toEqual({ deleted: 2 });
    const entries = await ctx.platform
      .db('audit_log')
      .where('account_id', account.id)
      .where('action', 'like', 'data_subject.%')
      .orderBy('id')
      .select('action', 'actor_type', 'details');
    const details = { email_sha256: createHash('sha256').update(ADA).digest('hex'), submissions: 2, files: 1 };
    expect(entries).toEqual([
      { action: 'data_subject.looked_up', actor_type: 'api_key', details },
      { action: 'data_subject.exported', actor_type: 'api_key', details: { ...details, format: 'ndjson' } },
      { action: 'data_subject.erased', actor_type: 'api_key', details },
    ]);
    expect(JSON.stringify(entries)).not.toContain('example.test');
  });
});

describe('data-subject requests, what is refused', () => {
  it.each([
    ['not an e-mail address', 'ada'],
    ['a NUL', 'ada\u0000@example.test'],
    ['10 KB', `${'a'.repeat(10_000)}@example.test`],
    ['nothing', ''],
  ])('refuses %s with 422 and removes nothing', async (_what, email) => {
    const { call, first } = await adaAndBob(ctx);
    for (const [method, route] of [
      ['GET', '/v1/data-subjects/submissions'],
      ['GET', '/v1/data-subjects/export'],
      ['DELETE', '/v1/data-subjects'],
    ] as const) {
      const { status, body } = await call(method, `${route}?email=${encodeURIComponent(email)}`);
      expect({ route, status, type: body.type }).toEqual({
        route,
        status: 422,
        type: expect.stringMatching(/validation-failed$/),
      });
    }
    expect(await ctx.platform.db('submissions').where({ id: first.id }).pluck('id')).toEqual([first.id]);
  });

  it('needs an editor: a viewer key is refused with 403', async () => {
    const { call } = await adaAndBob(ctx);
    const { body: minted } = await call('POST', '/v1/api-keys', { type: 'management', role: 'viewer' });
    const viewer = api(ctx.url, minted.key);
    expect((await viewer('GET', `/v1/data-subjects/submissions?email=${ADA}`)).status).toBe(403);
    expect((await viewer('DELETE', `/v1/data-subjects?email=${ADA}`)).status).toBe(403);
    expect((await call('GET', `/v1/data-subjects/submissions?email=${ADA}`)).body.data).toHaveLength(2);
  });

  it('a project named by someone limited to other projects is 404, and nothing is erased', async () => {
    const { call, client, first, other } = await adaAndBob(ctx);
    const elsewhere = await factories.project(
      ctx.platform.db,
      (await ctx.platform.db('projects').where({ id: client.id }).first()).account_id,
      'Other',
    );
    const { body: minted } = await call('POST', '/v1/api-keys', {
      type: 'management',
      role: 'editor',
      project_ids: [elsewhere.id],
    });
    const limited = api(ctx.url, minted.key);
    const res = await limited('DELETE', `/v1/data-subjects?email=${ADA}&project_id=${client.id}`);
    expect(res.status).toBe(404);
    expect(await ctx.platform.db('submissions').whereIn('id', [first.id, other.id]).pluck('id')).toHaveLength(2);
  });

  it('needs a management key', async () => {
    const { account } = await ownerWithForm(ctx);
    const submissionKey = await factories.apiKey(ctx.platform.db, account.id, 'submission');
    expect((await api(ctx.url)('GET', `/v1/data-subjects/submissions?email=${ADA}`)).status).toBe(401);
    expect((await api(ctx.url, submissionKey)('DELETE', `/v1/data-subjects?email=${ADA}`)).status).toBe(403);
  });
});

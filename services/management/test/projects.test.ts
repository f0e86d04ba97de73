import { addTestMember, factories, memberSessionHeaders, useStarted } from '@intake/shared/testing';
import { api, startManagement } from './helpers';

const ctx = useStarted(() => startManagement());

type Call = ReturnType<typeof api>;
const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((x) => x.id).sort();

/** An agency's account: its default project with one form, and a client's project with another. */
async function agency() {
  const account = await factories.account(ctx.platform.db);
  const call = api(ctx.url, account.managementKey);
  const projects = (await call('GET', '/v1/projects')).body.data as { id: string; is_default: boolean }[];
  const home = projects[0] as { id: string };
  const client = (await call('POST', '/v1/projects', { name: 'Client A' })).body as { id: string };
  const own = (await call('POST', '/v1/forms', { name: 'Agency contact' })).body as { id: string; project_id: string };
  const theirs = (await call('POST', '/v1/forms', { name: 'Client contact', project_id: client.id })).body as {
    id: string;
  };
  return { account, call, home, client, own, theirs };
}

describe('projects', () => {
  it('every account has a default project; forms go there unless they name one, move with PATCH, list by project', async () => {
    const { call, home, client, own, theirs } = await agency();
    expect((await call('GET', '/v1/projects')).body.data).toEqual([
      expect.objectContaining({ id: home.id, name: 'Default', is_default: true, form_count: 1 }),
      expect.objectContaining({ id: client.id, name: 'Client A', is_default: false, form_count: 1 }),
    ]);
    expect(own.project_id).toBe(home.id);
    expect(ids(await call('GET', `/v1/forms?project_id=${client.id}`))).toEqual([theirs.id]);
    expect(ids(await call('GET', '/v1/forms'))).toEqual([own.id, theirs.id].sort());

    const moved = await call('PATCH', `/v1/forms/${own.id}`, { project_id: client.id });
    expect(moved.body).toMatchObject({ id: own.id, project_id: client.id });
    expect(ids(await call('GET', `/v1/forms?project_id=${client.id}`))).toEqual([own.id, theirs.id].sort());

    // Names are unique ignoring case; a project of another account is no project here.
    expect((await call('POST', '/v1/projects', { name: 'client a' })).status).toBe(409);
    const renamed = await call('PATCH', `/v1/projects/${client.id}`, { name: 'default' });
    expect(renamed).toMatchObject({ status: 409, body: { errors: [{ field: 'body/name' }] } });
    const stranger = await factories.account(ctx.platform.db);
    const strangers = (await api(ctx.url, stranger.managementKey)('GET', '/v1/projects')).body.data[0].id as string;
    expect((await call('POST', '/v1/forms', { name: 'X', project_id: strangers })).status).toBe(404);
    expect((await call('PATCH', `/v1/forms/${own.id}`, { project_id: strangers })).status).toBe(404);
    expect((await call('GET', `/v1/projects/${strangers}`)).status).toBe(404);
  });

  it('deletes only an empty project that is not the default, trashed forms counting', async () => {
    const { call, home, client, own, theirs } = await agency();
    expect((await call('DELETE', `/v1/projects/${home.id}`)).status).toBe(409);
    expect((await call('DELETE', `/v1/projects/${client.id}`)).status).toBe(409);
    expect((await call('DELETE', `/v1/forms/${theirs.id}`)).status).toBe(204);
    const refused = await call('DELETE', `/v1/projects/${client.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/1 form .*trash/);
    expect((await call('DELETE', `/v1/forms/${theirs.id}?permanently=true`)).status).toBe(204);
    expect((await call('PATCH', `/v1/projects/${client.id}`, { name: 'Client B' })).body.name).toBe('Client B');
    expect((await call('DELETE', `/v1/projects/${client.id}`)).status).toBe(204);
    expect(ids(await call('GET', '/v1/projects'))).toEqual([home.id]);
    expect((await call('GET', `/v1/forms/${own.id}`)).status).toBe(200);

    const audit = (await call('GET', `/v1/audit-log?project_id=${client.id}&limit=20`)).body.data as {
      action: string;
      project: { id: string } | null;
      summary: string;
    }[];
    expect(audit.map((e) => e.action)).toEqual([
      'project.deleted',
      'project.updated',
      'form.deleted',
      'form.deleted',
      'form.created',
      'project.created',
    ]);
    expect(audit.every((e) => e.project?.id === client.id)).toBe(true);
    expect(audit[1]?.summary).toMatch(/renamed the project .* to “Client B”/);
  });
});

/** The client's people: a member's session and a key, each an editor limited to the client's project. */
async function clientPeople(a: Awaited<ReturnType<typeof agency>>) {
  const invited = await a.call('POST', '/v1/members', {
    email: `client-${Date.now()}@example.com`,
    role: 'editor',
    project_ids: [a.client.id],
  });
  expect(invited.body).toMatchObject({ role: 'editor', project_ids: [a.client.id] });
  const member = await addTestMember(ctx.platform.db, a.account.id, 'editor', { projectIds: [a.client.id] });
  const headers = await memberSessionHeaders(ctx.platform.db, a.account.id, member.memberId);
  const key = await a.call('POST', '/v1/api-keys', {
    type: 'management',
    role: 'editor',
    project_ids: [a.client.id],
  });
  expect(key.body).toMatchObject({ role: 'editor', project_ids: [a.client.id] });
  return {
    session: api(ctx.url, undefined) as Call,
    sessionHeaders: { ...headers } as Record<string, string>,
    key: api(ctx.url, key.body.key as string),
    memberId: member.memberId,
  };
}

describe('members and keys limited to projects', () => {
  it('sees and changes only their projects’ forms and what they hold; the rest is 404 as another account’s', async () => {
    const a = await agency();
    const submission = await factories.submission(ctx.platform, {
      accountId: a.account.id,
      formId: a.own.id,
      payload: { name: 'Agency lead' },
    });
    const people = await clientPeople(a);
    const callers: [string, Call][] = [
      ['key', people.key],
      [
        'session',
        (method, path, body, headers = {}) =>
          people.session(method, path, body, { ...people.sessionHeaders, ...headers }),
      ],
    ];
    for (const [who, call] of callers) {
      const seen = {
        who,
        forms: ids(await call('GET', '/v1/forms')),
        projects: ids(await call('GET', '/v1/projects')),
      };
      expect(seen).toEqual({ who, forms: expect.arrayContaining([a.theirs.id]), projects: [a.client.id] });
      expect(seen.forms).not.toContain(a.own.id);
      for (const [method, path, body] of [
        ['GET', `/v1/forms/${a.own.id}`],
        ['PATCH', `/v1/forms/${a.own.id}`, { name: 'Mine now' }],
        ['GET', `/v1/forms/${a.own.id}/submissions`],
        ['GET', `/v1/submissions/${submission.id}`],
        ['POST', '/v1/submissions/bulk', { ids: [submission.id], action: 'delete' }],
        ['GET', `/v1/projects/${a.home.id}`],
        ['GET', `/v1/forms?project_id=${a.home.id}`],
        ['GET', `/v1/spam/model?form_id=${a.own.id}`],
        ['PATCH', `/v1/forms/${a.theirs.id}`, { project_id: a.home.id }],
        ['POST', '/v1/forms', { name: 'Sneaky', project_id: a.home.id }],
      ] as const) {
        const res = await call(method, path, body);
        expect({ who, method, path, status: res.status }).toEqual({ who, method, path, status: 404 });
      }
      // Account-wide pages are not theirs; their own project's forms are.
      expect((await call('GET', '/v1/members')).status).toBe(403);
      expect((await call('GET', '/v1/spam/model')).body.scope).toEqual({ type: 'project', id: a.client.id });
      expect((await call('GET', `/v1/spam/model?project_id=${a.home.id}`)).status).toBe(404);
      expect((await call('PATCH', `/v1/forms/${a.theirs.id}`, { name: `Renamed by ${who}` })).status).toBe(200);
      const created = await call('POST', '/v1/forms', { name: `New by ${who}` });
      expect(created.body.project_id).toBe(a.client.id);
    }
    expect((await a.call('GET', `/v1/forms/${a.own.id}`)).body.name).toBe('Agency contact');
    expect((await a.call('GET', `/v1/submissions/${submission.id}`)).status).toBe(200);
  });
});

describe('project limits', () => {
  it('limits only viewers and editors; a role change to admin lifts the limit; a deleted project leaves the rest', async () => {
    const a = await agency();
    for (const role of ['admin'])
      expect(
        (await a.call('POST', '/v1/members', { email: `x${role}@example.com`, role, project_ids: [a.client.id] }))
          .status,
      ).toBe(422);
    expect(
      (await a.call('POST', '/v1/api-keys', { type: 'management', role: 'admin', project_ids: [a.client.id] })).status,
    ).toBe(422);
    expect((await a.call('POST', '/v1/api-keys', { type: 'submission', project_ids: [a.client.id] })).status).toBe(422);
    const stranger = await factories.account(ctx.platform.db);
    const strangers = (await api(ctx.url, stranger.managementKey)('GET', '/v1/projects')).body.data[0].id as string;
    expect(
      (await a.call('POST', '/v1/members', { email: 'y@example.com', role: 'viewer', project_ids: [strangers] }))
        .status,
    ).toBe(404);

    const people = await clientPeople(a);
    const member = `/v1/members/${people.memberId}`;
    expect((await a.call('PATCH', member, { role: 'viewer' })).body.project_ids).toEqual([a.client.id]);
    expect((await a.call('PATCH', member, { project_ids: [a.client.id, a.home.id] })).body.project_ids).toEqual([
      a.client.id,
      a.home.id,
    ]);
    expect((await a.call('PATCH', member, { role: 'admin' })).body).toMatchObject({ role: 'admin', project_ids: null });
    expect((await a.call('PATCH', member, { role: 'editor', project_ids: [a.client.id] })).status).toBe(200);

    // The client's project emptied and deleted: its people are limited to nothing and see nothing.
    expect((await a.call('DELETE', `/v1/forms/${a.theirs.id}?permanently=true`)).status).toBe(204);
    expect((await a.call('DELETE', `/v1/projects/${a.client.id}`)).status).toBe(204);
    const listed = (await a.call('GET', '/v1/members')).body.data as { id: string; project_ids: string[] | null }[];
    expect(listed.find((m) => m.id === people.memberId)?.project_ids).toEqual([]);
    expect(ids(await people.key('GET', '/v1/forms'))).toEqual([]);
    expect((await people.key('POST', '/v1/forms', { name: 'Nowhere' })).status).toBe(404);
  });
});

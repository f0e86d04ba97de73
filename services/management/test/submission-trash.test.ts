import { factories, managementKeyWithRole, useStarted } from '@intake/shared/testing';
import { api, startManagement } from './helpers';

/** The submission trash: listed across forms, per form and per project, restored, deleted for good. */
const ctx = useStarted(() => startManagement());

type Listed = {
  id: string;
  form: { id: string; name: string };
  project: { id: string; name: string } | null;
  deleted_at: string;
  purge_at: string;
};

/** An agency: a form of its own and one of a client's, two submissions each, one of each deleted in turn. */
async function agencyWithTrash() {
  const { db } = ctx.platform;
  const account = await factories.account(db);
  const call = api(ctx.url, account.managementKey);
  const client = await factories.project(db, account.id, 'Acme Dental');
  const own = (await call('POST', '/v1/forms', { name: 'Agency contact' })).body as { id: string };
  const theirs = (await call('POST', '/v1/forms', { name: 'Booking', project_id: client.id })).body as { id: string };
  const store = (formId: string, name: string) =>
    factories.submission(ctx.platform, { accountId: account.id, formId, payload: { name } });
  const ownKept = await store(own.id, 'Kept');
  const ownGone = await store(own.id, 'Ada');
  const theirsGone = await store(theirs.id, 'Bob');
  await store(theirs.id, 'Kept too');
  expect((await call('DELETE', `/v1/submissions/${ownGone.id}`)).status).toBe(204);
  expect((await call('DELETE', `/v1/submissions/${theirsGone.id}`)).status).toBe(204);
  return { account, call, client, own, theirs, ownKept, ownGone, theirsGone };
}

const idsOf = (body: { data: Listed[] }) => body.data.map((s) => s.id);

describe('GET /v1/submissions?deleted=true', () => {
  it('lists deleted submissions newest first, named with form and client, across forms, per form and per project', async () => {
    const { call, client, own, theirs, ownGone, theirsGone } = await agencyWithTrash();
    const all = await call('GET', '/v1/submissions?deleted=true');
    expect(all.status).toBe(200);
    expect(idsOf(all.body)).toEqual([theirsGone.id, ownGone.id]);
    const [first, second] = all.body.data as Listed[];
    expect(first).toMatchObject({
      form: { id: theirs.id, name: 'Booking' },
      project: { id: client.id, name: 'Acme Dental' },
      payload: { name: 'Bob' },
    });
    // The account's default project names no client.
    expect(second).toMatchObject({ form: { id: own.id, name: 'Agency contact' }, project: null });
    expect(Date.parse(first!.purge_at) - Date.parse(first!.deleted_at)).toBe(30 * 86_400_000);

    expect(idsOf((await call('GET', `/v1/submissions?deleted=true&form_id=${own.id}`)).body)).toEqual([ownGone.id]);
    const perProject = await call('GET', `/v1/submissions?deleted=true&project_id=${client.id}`);
    expect(idsOf(perProject.body)).toEqual([theirsGone.id]);

    // A page at a time.
    const page1 = await call('GET', '/v1/submissions?deleted=true&limit=1');
    expect(idsOf(page1.body)).toEqual([theirsGone.id]);
    const page2 = await call('GET', `/v1/submissions?deleted=true&limit=1&cursor=${page1.body.next_cursor}`);
    expect([idsOf(page2.body), page2.body.next_cursor]).toEqual([[ownGone.id], null]);
  });

  it('gives back what is restored, forgets what is deleted for good, and leaves a trashed form’s submissions to it', async () => {
    const { call, own, ownKept, ownGone, theirsGone } = await agencyWithTrash();
    const restored = await call('POST', '/v1/submissions/restore', { ids: [ownGone.id] });
    expect(restored.body).toEqual({ done: [ownGone.id], not_found: [] });
    expect(idsOf((await call('GET', '/v1/submissions?deleted=true')).body)).toEqual([theirsGone.id]);

    expect((await call('DELETE', `/v1/submissions/${theirsGone.id}?permanently=true`)).status).toBe(204);
    expect(idsOf((await call('GET', '/v1/submissions?deleted=true')).body)).toEqual([]);
    expect(await ctx.platform.db('submissions').where({ id: theirsGone.id }).first('id')).toBeUndefined();
    expect((await call('POST', '/v1/submissions/restore', { ids: [theirsGone.id] })).body.not_found).toEqual([
      theirsGone.id,
    ]);
    const audit = (await call('GET', '/v1/audit-log?limit=1')).body.data as { action: string; summary: string }[];
    expect(audit[0]).toMatchObject({ action: 'submission.deleted', summary: expect.stringMatching(/for good/) });

    // A submission not yet in the trash is deleted for good too.
    expect((await call('DELETE', `/v1/submissions/${ownKept.id}?permanently=true`)).status).toBe(204);
    expect((await call('GET', `/v1/submissions/${ownKept.id}`)).status).toBe(404);

    // A form in the trash takes its deleted submissions with it: they come back with the form.
    expect((await call('DELETE', `/v1/submissions/${ownGone.id}`)).status).toBe(204);
    expect((await call('DELETE', `/v1/forms/${own.id}`)).status).toBe(204);
    expect(idsOf((await call('GET', '/v1/submissions?deleted=true')).body)).toEqual([]);
    expect((await call('DELETE', `/v1/submissions/${ownGone.id}?permanently=true`)).status).toBe(404);
  });

  it('shows a member or key limited to projects only theirs, and refuses another account’s ids', async () => {
    const { account, client, own, theirsGone, ownGone } = await agencyWithTrash();
    const limited = api(
      ctx.url,
      await managementKeyWithRole(ctx.platform.db, account.id, 'editor', { projectIds: [client.id] }),
    );
    expect(idsOf((await limited('GET', '/v1/submissions?deleted=true')).body)).toEqual([theirsGone.id]);
    expect((await limited('GET', `/v1/submissions?deleted=true&form_id=${own.id}`)).status).toBe(404);
    expect((await limited('DELETE', `/v1/submissions/${ownGone.id}?permanently=true`)).status).toBe(404);
    const viewer = api(ctx.url, await managementKeyWithRole(ctx.platform.db, account.id, 'viewer'));
    expect((await viewer('GET', '/v1/submissions?deleted=true')).status).toBe(200);
    expect((await viewer('DELETE', `/v1/submissions/${ownGone.id}?permanently=true`)).status).toBe(403);

    const stranger = api(ctx.url, (await factories.account(ctx.platform.db)).managementKey);
    expect(idsOf((await stranger('GET', '/v1/submissions?deleted=true')).body)).toEqual([]);
    expect((await stranger('GET', `/v1/submissions?deleted=true&form_id=${own.id}`)).status).toBe(404);
    expect((await stranger('DELETE', `/v1/submissions/${ownGone.id}?permanently=true`)).status).toBe(404);
    expect((await stranger('GET', '/v1/submissions?deleted=true&cursor=nonsense')).status).toBe(422);
  });
});

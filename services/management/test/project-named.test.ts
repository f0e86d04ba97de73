import { factories, useStarted } from '@intake/shared/testing';
import { api, startManagement } from './helpers';

const ctx = useStarted(() => startManagement());

interface Form {
  id: string;
  name: string;
  project_id: string;
  project: { id: string; name: string } | null;
}

/** An agency: a form in its default project, and one of the same name in a client's project. */
async function agency() {
  const account = await factories.account(ctx.platform.db);
  const call = api(ctx.url, account.managementKey);
  const client = (await call('POST', '/v1/projects', { name: 'Acme Dental' })).body as { id: string };
  const own = (await call('POST', '/v1/forms', { name: 'Contact' })).body as Form;
  const theirs = (await call('POST', '/v1/forms', { name: 'Contact', project_id: client.id })).body as Form;
  return { account, call, client, own, theirs };
}

describe('the client named beside its form in the API', () => {
  it('gives every form its project, null in the account’s default project, in each answer that shows a form', async () => {
    const { call, client, own, theirs } = await agency();
    const acme = { id: client.id, name: 'Acme Dental' };
    expect(theirs).toMatchObject({ project_id: client.id, project: acme });
    expect(own).toMatchObject({ project_id: expect.stringMatching(/^prj_/), project: null });
    const listed = (await call('GET', '/v1/forms')).body.data as Form[];
    expect(listed.map((f) => [f.id, f.project])).toEqual(
      expect.arrayContaining([
        [own.id, null],
        [theirs.id, acme],
      ]),
    );
    expect((await call('GET', `/v1/forms/${theirs.id}`)).body).toMatchObject({ project: acme });

    // Renamed: the answers name it as it is now. Moved: as where it is now. In the trash: still named.
    await call('PATCH', `/v1/projects/${client.id}`, { name: 'Acme Dental Care' });
    const renamed = { id: client.id, name: 'Acme Dental Care' };
    expect((await call('PATCH', `/v1/forms/${own.id}`, { project_id: client.id })).body).toMatchObject({
      project: renamed,
    });
    expect((await call('DELETE', `/v1/forms/${theirs.id}`)).status).toBe(204);
    const trash = (await call('GET', '/v1/forms?deleted=true')).body.data as Form[];
    expect(trash.map((f) => [f.id, f.project])).toEqual([[theirs.id, renamed]]);
    expect((await call('POST', `/v1/forms/${theirs.id}/restore`)).body).toMatchObject({ project: renamed });
  });

  it('names the client in the audit log’s summary of an entry about its form, or of anything in its project', async () => {
    const { call, own, theirs } = await agency();
    await call('PATCH', `/v1/forms/${theirs.id}`, { status: 'paused' });
    await call('PATCH', `/v1/forms/${own.id}`, { status: 'paused' });
    await call('POST', `/v1/forms/${theirs.id}/webhooks`, { url: 'https://hooks.example.com/acme' });
    const entries = (await call('GET', '/v1/audit-log?limit=20')).body.data as {
      action: string;
      target: { id: string } | null;
      summary: string;
    }[];
    const summary = (action: string, id?: string) =>
      entries.find((e) => e.action === action && (!id || e.target?.id === id))?.summary;
    expect(summary('form.updated', theirs.id)).toMatch(/ the form “Contact” \(Acme Dental\)\.$/);
    expect(summary('form.updated', own.id)).toMatch(/ the form “Contact”\.$/);
    expect(summary('webhook.created')).toMatch(
      /^Key “.+” added the webhook “https:\/\/hooks\.example\.com\/.*” \(Acme Dental\)\.$/,
    );
    expect(summary('project.created')).toMatch(/created the project “Acme Dental”\.$/);
  });
});

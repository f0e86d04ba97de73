import { addTestMember, factories, memberSessionHeaders, useStarted } from '@intake/shared/testing';
import { api, startManagement } from './helpers';

const ctx = useStarted(() => startManagement());

describe('saved views', () => {
  it('keeps named inbox filters per form for the whole account; refuses a bad filter, a taken name, another’s form', async () => {
    const account = await factories.account(ctx.platform.db);
    const call = api(ctx.url, account.managementKey);
    const form = await factories.form(ctx.platform.db, account.id);
    const filters = { status: 'spam', since: '2026-03-01', q: 'invoice', order: 'asc' };
    const saved = await call('POST', `/v1/forms/${form.id}/views`, { name: ' Invoices ', filters });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({
      id: expect.stringMatching(/^vw_/),
      name: 'Invoices',
      filters,
      form_id: form.id,
    });

    // Another member of the account sees it; a viewer may read it but not save one.
    const viewer = await addTestMember(ctx.platform.db, account.id, 'viewer');
    const headers = await memberSessionHeaders(ctx.platform.db, account.id, viewer.memberId);
    const listed = await fetch(`${ctx.url}/v1/forms/${form.id}/views`, { headers: { ...headers } });
    expect(((await listed.json()) as { data: { name: string }[] }).data.map((v) => v.name)).toEqual(['Invoices']);
    const refused = await fetch(`${ctx.url}/v1/forms/${form.id}/views`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Mine', filters: {} }),
    });
    expect(refused.status).toBe(403);

    for (const [body, status] of [
      [{ name: 'Invoices', filters: {} }, 409],
      [{ name: 'Bad day', filters: { since: 'yesterday' } }, 422],
      [{ name: 'Extra', filters: { payload: 'x' } }, 422],
      [{ name: '   ', filters: {} }, 422],
    ] as const)
      expect({ body, status: (await call('POST', `/v1/forms/${form.id}/views`, body)).status }).toEqual({
        body,
        status,
      });
    const stranger = await factories.account(ctx.platform.db);
    const theirs = await factories.form(ctx.platform.db, stranger.id);
    expect((await call('POST', `/v1/forms/${theirs.id}/views`, { name: 'x', filters: {} })).status).toBe(404);
    expect((await call('GET', `/v1/forms/${theirs.id}/views`)).status).toBe(404);
    expect((await api(ctx.url, stranger.managementKey)('DELETE', `/v1/views/${saved.body.id}`)).status).toBe(404);

    expect((await call('DELETE', `/v1/views/${saved.body.id}`)).status).toBe(204);
    expect((await call('GET', `/v1/forms/${form.id}/views`)).body.data).toEqual([]);
    const audit = (await call('GET', '/v1/audit-log?limit=5')).body.data as { action: string }[];
    expect(audit.map((e) => e.action)).toEqual(expect.arrayContaining(['view.saved', 'view.deleted']));
  });
});

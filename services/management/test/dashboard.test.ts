import { factories, managementKeyWithRole, useStarted } from '@intake/shared/testing';
import { api, startManagement } from './helpers';

const ctx = useStarted(() => startManagement());

const DAY = 86_400_000;
const day = (ago: number) => new Date(Date.now() - ago * DAY).toISOString().slice(0, 10);

/** What the usage consumer would have counted for a form on a day: its row, and its project's roll-up. */
async function counted(accountId: string, formId: string, ago: number, received: number, spam: number) {
  const { db } = ctx.platform;
  await db('usage_daily').insert({ account_id: accountId, form_id: formId, day: day(ago), received, spam });
  const { project_id } = await db('forms').where({ id: formId }).first('project_id');
  await db.raw(
    `INSERT INTO usage_daily_projects AS u (account_id, project_id, day, received, spam) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (account_id, project_id, day) DO UPDATE
       SET received = u.received + excluded.received, spam = u.spam + excluded.spam`,
    [accountId, project_id, day(ago), received, spam],
  );
}

/** An account with a form in its default project (Contact) and one in a client's (Quote). */
async function accountWithTwoProjects() {
  const account = await factories.account(ctx.platform.db);
  const call = api(ctx.url, account.managementKey);
  const home = (await call('GET', '/v1/projects')).body.data[0].id as string;
  const client = (await call('POST', '/v1/projects', { name: 'Client' })).body.id as string;
  const contact = (await call('POST', '/v1/forms', { name: 'Contact' })).body.id as string;
  const quote = (await call('POST', '/v1/forms', { name: 'Quote', project_id: client })).body.id as string;
  return { account, call, home, client, contact, quote };
}

describe('dashboards', () => {
  it('show per project and per form the window’s submissions and spam by day, unread, last submission, failing webhooks', async () => {
    const { account, call, home, client, contact, quote } = await accountWithTwoProjects();
    const posts = [];
    for (let i = 0; i < 3; i++)
      posts.push(await factories.submission(ctx.platform, { accountId: account.id, formId: quote }));
    await factories.submission(ctx.platform, { accountId: account.id, formId: quote, status: 'spam' });
    expect((await call('PATCH', `/v1/submissions/${posts[0]?.id}`, { read: true })).status).toBe(200);
    await counted(account.id, quote, 0, 3, 1);
    await counted(account.id, quote, 10, 5, 4);
    await counted(account.id, quote, 40, 100, 100); // before a 30-day window
    await counted(account.id, contact, 2, 2, 0);
    const hook = await call('POST', `/v1/forms/${quote}/webhooks`, { url: 'https://hooks.example/intake' });
    await ctx.platform.db('webhooks').where({ id: hook.body.id }).update({ failing_since: new Date() });

    const board = await call('GET', '/v1/dashboard');
    expect(board.status).toBe(200);
    expect(board.body).toMatchObject({
      from: day(29),
      to: day(0),
      totals: { received: 10, spam: 5, spam_week: 1, failing_webhooks: 1, last_day: day(0) },
    });
    expect(board.body.days).toHaveLength(30);
    expect(board.body.projects).toEqual([
      expect.objectContaining({ id: home, form_count: 1, received: 2, spam: 0, failing_webhooks: 0, last_day: day(2) }),
      expect.objectContaining({ id: client, form_count: 1, received: 8, spam: 5, spam_week: 1, failing_webhooks: 1 }),
    ]);

    const project = await call('GET', `/v1/projects/${client}/dashboard?days=90`);
    expect(project.body.days).toHaveLength(90);
    expect(project.body.totals).toMatchObject({ received: 108, spam: 105 });
    expect(project.body.forms).toEqual([
      expect.objectContaining({
        id: quote,
        name: 'Quote',
        unread: 2,
        unread_capped: false,
        failing_webhooks: 1,
        received: 108,
        spam: 105,
        spam_week: 1,
        last_submission_at: expect.any(String),
      }),
    ]);
    const today = project.body.forms[0].days.at(-1);
    expect(today).toEqual({ date: day(0), received: 3, spam: 1 });
    expect((await call('GET', `/v1/projects/${client}/dashboard?days=91`)).status).toBe(422);

    // A form moved to another project takes its counted days along.
    expect((await call('PATCH', `/v1/forms/${quote}`, { project_id: home })).status).toBe(200);
    const moved = await call('GET', '/v1/dashboard?days=90');
    expect(moved.body.projects).toEqual([
      expect.objectContaining({ id: home, form_count: 2, received: 110, spam: 105 }),
      expect.objectContaining({ id: client, form_count: 0, received: 0, spam: 0 }),
    ]);
    expect(moved.body.totals).toMatchObject({ received: 110, spam: 105 });
  });

  it('pages a project’s forms, and shows a member limited to projects only theirs', async () => {
    const account = await factories.account(ctx.platform.db);
    const call = api(ctx.url, account.managementKey);
    const home = (await call('GET', '/v1/projects')).body.data[0].id as string;
    const client = (await call('POST', '/v1/projects', { name: 'Client' })).body.id as string;
    for (let i = 0; i < 3; i++) await call('POST', '/v1/forms', { name: `Form ${i}`, project_id: client });
    const first = await call('GET', `/v1/projects/${client}/dashboard?limit=2`);
    expect(first.body.forms.map((f: { name: string }) => f.name)).toEqual(['Form 2', 'Form 1']);
    const rest = await call('GET', `/v1/projects/${client}/dashboard?limit=2&cursor=${first.body.next_cursor}`);
    expect(rest.body).toMatchObject({ forms: [expect.objectContaining({ name: 'Form 0' })], next_cursor: null });

    const limited = api(
      ctx.url,
      await managementKeyWithRole(ctx.platform.db, account.id, 'viewer', { projectIds: [client] }),
    );
    expect((await limited('GET', '/v1/dashboard')).body.projects.map((p: { id: string }) => p.id)).toEqual([client]);
    expect((await limited('GET', `/v1/projects/${home}/dashboard`)).status).toBe(404);
  });
});

describe('the account dashboard’s unread', () => {
  it('counts per project the unopened received submissions of its forms, not read ones, spam or the trash', async () => {
    const { account, call, home, client, contact, quote } = await accountWithTwoProjects();
    const store = (formId: string, status: 'received' | 'spam' = 'received') =>
      factories.submission(ctx.platform, { accountId: account.id, formId, status });
    await store(contact);
    await store(quote);
    await store(quote);
    await store(quote, 'spam');
    const read = await store(quote);
    expect((await call('PATCH', `/v1/submissions/${read.id}`, { read: true })).status).toBe(200);
    const trashed = await store(quote);
    expect((await call('DELETE', `/v1/submissions/${trashed.id}`)).status).toBe(204);
    const unread = (await call('GET', '/v1/dashboard')).body.projects.map(
      (p: { id: string; unread: number; unread_capped: boolean }) => [p.id, p.unread, p.unread_capped],
    );
    expect(unread).toEqual([
      [home, 1, false],
      [client, 2, false],
    ]);
  });
});

import { addTestMember, memberSessionHeaders } from '@intake/shared/testing';
import { checkView, expectReflowed, useOwnerConsole } from './owner';

/**
 * Projects in the console, in Chromium over the real stack: the account's dashboard and a project's, a form made in a
 * project and found by the forms page's project filter, a member invited for one project, and what that member sees.
 */
jest.setTimeout(120_000);

const c = useOwnerConsole();

describe('projects in the console', () => {
  it('creates a project from the dashboard, and a form in it from the project’s page', async () => {
    const { page } = c;
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await page.getByRole('region', { name: 'Projects at a glance' }).getByRole('link', { name: 'Default' }).waitFor();
    await checkView(page, 'dashboard', /^Dashboard · Intake console$/);

    await page.getByLabel('Name').fill('Client A');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('status').filter({ hasText: 'Project “Client A” created.' }).waitFor();
    await page.getByRole('heading', { name: 'Client A', level: 1 }).waitFor();
    await page.getByText('No forms in this project yet.').waitFor();

    await page.getByRole('link', { name: 'New form' }).click();
    expect(await page.getByLabel('Project').inputValue()).toMatch(/^prj_/);
    expect(await page.getByLabel('Project').locator('option:checked').textContent()).toBe('Client A');
    await page.getByLabel('Name').fill('Quote');
    await page.getByRole('button', { name: 'Create form' }).click();
    await page.getByRole('status').filter({ hasText: 'Form “Quote” created.' }).waitFor();

    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.getByRole('region', { name: 'Projects at a glance' }).getByRole('link', { name: 'Client A' }).click();
    const forms = page.getByRole('region', { name: 'Forms of the project' });
    await forms.getByRole('link', { name: 'Quote' }).waitFor();
    expect(await forms.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['live', '0', 'none yet']));
    await page.getByRole('link', { name: 'Last 90 days' }).click();
    await page
      .getByRole('link', { name: 'Last 90 days', exact: true })
      .and(page.locator('[aria-current="page"]'))
      .waitFor();
    await checkView(page, 'project', /^Client A · Intake console$/);
    await expectReflowed(page, 'Forms of the project');
  });

  it('filters the forms page by project and names each form’s project when showing all', async () => {
    const { page } = c;
    await page.getByRole('link', { name: 'Forms', exact: true }).click();
    const table = page.getByRole('region', { name: 'Forms', exact: true });
    await table.getByRole('link', { name: 'Quote' }).waitFor();
    expect(await table.getByRole('columnheader').allTextContents()).toContain('Project');
    await page.getByLabel('Show').selectOption({ label: 'Default' });
    await page.waitForURL(/\/console\/forms\?project=prj_/);
    await page.getByText('No forms yet').waitFor();
    await page.getByLabel('Show').selectOption({ label: 'Client A' });
    await table.getByRole('link', { name: 'Quote' }).waitFor();
  });

  it('invites a viewer for one project, who then sees that project alone and no account-wide page', async () => {
    const { page, stack, account } = c;
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByLabel('Email').fill('client@example.com');
    // Nothing is chosen at first: inviting without choosing says so, and invites nobody.
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByRole('alert').filter({ hasText: 'Choose the whole account or the projects' }).waitFor();
    expect(await stack.platform.db('members').where({ account_id: account.id, email: 'client@example.com' })).toEqual(
      [],
    );
    const reach = page.getByRole('group', { name: 'What may they see?' });
    await reach.getByLabel('Only the projects ticked below').check();
    await reach.getByLabel('Client A').check();
    await checkView(page, 'members-invite-reach', /^Members · Intake console$/);
    await page.getByRole('button', { name: 'Invite' }).click();
    const row = page.getByRole('row').filter({ hasText: 'client@example.com' });
    await row.getByRole('cell', { name: 'Client A' }).waitFor();

    const client = await stack.platform.db('projects').where({ account_id: account.id, name: 'Client A' }).first('id');
    const member = await addTestMember(stack.platform.db, account.id, 'viewer', { projectIds: [client.id] });
    const headers = await memberSessionHeaders(stack.platform.db, account.id, member.memberId);
    const context = await c.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const [name, value] = headers.cookie.split('=') as [string, string];
    await context.addCookies([{ name, value, url: stack.url }]);
    const theirs = await context.newPage();
    await theirs.goto(`${stack.url}/console/dashboard`);
    const projects = theirs.getByRole('region', { name: 'Projects at a glance' });
    await projects.getByRole('link', { name: 'Client A' }).waitFor();
    expect(await projects.getByRole('link').allTextContents()).toEqual(['Client A']);
    expect(await theirs.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).not.toContain(
      'Members',
    );
    expect(await theirs.getByRole('button', { name: 'Create project' }).count()).toBe(0);
    await checkView(theirs, 'dashboard-limited', /^Dashboard · Intake console$/);
    await context.close();
  });
});

import { eventually, factories } from '@intake/shared/testing';
import { checkView, expectReflowed, useOwnerConsole, type OwnerConsole } from './owner';

/**
 * The client named wherever the console names a form, in real Chromium over the real stack: a form “Contact” in the
 * project “Acme Dental” beside a “Contact” of the account's default project; its inbox, a submission, the audit log,
 * Usage, Privacy and the trash. A project named like markup shows as text.
 */
jest.setTimeout(120_000);

const HOSTILE = '<img src=x onerror=alert(1)>';
const ADA = 'ada@acme.example';

type Setup = OwnerConsole & {
  acme: { id: string };
  contact: { id: string };
  hostile: { id: string };
  dialogs: string[];
};

/** A form named `name` in `projectId` (the default project when left out), with one submission from Ada. */
async function formWithPost(c: OwnerConsole, name: string, projectId?: string) {
  const { db } = c.stack.platform;
  const form = await factories.form(db, c.account.id, { project_id: projectId });
  await db('forms').where({ id: form.id }).update({ name });
  await factories.submission(c.stack.platform, {
    accountId: c.account.id,
    formId: form.id,
    formName: name,
    payload: { name: 'Ada', email: ADA },
  });
  return form;
}

/** The management API as the account's owner (its key). */
async function call(c: OwnerConsole, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${c.stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${c.account.managementKey}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.ok).toBe(true);
  return res.status === 204 ? undefined : res.json();
}

function useClientConsole(): Setup {
  const c = useOwnerConsole() as Setup;
  beforeAll(async () => {
    const { db } = c.stack.platform;
    c.acme = await factories.project(db, c.account.id, 'Acme Dental');
    c.contact = await formWithPost(c, 'Contact', c.acme.id);
    await formWithPost(c, 'Contact');
    c.hostile = await formWithPost(c, 'Contact', (await factories.project(db, c.account.id, HOSTILE)).id);
    // A change of the form, which the audit log records with the project it is in.
    await call(c, 'PATCH', `/v1/forms/${c.contact.id}`, { status: 'paused' });
    c.dialogs = [];
    c.page.on('dialog', (d) => {
      c.dialogs.push(d.message());
      void d.dismiss();
    });
  });
  return c;
}

const c = useClientConsole();

describe('the client named in a form’s pages', () => {
  it('names the client in the inbox’s breadcrumb and title, and in a submission’s', async () => {
    const { page } = c;
    // The forms list's buttons tell the two “Contact” forms apart to a screen reader too.
    await page.goto(`${c.stack.url}/console/forms`);
    await page.getByRole('button', { name: 'Resume Contact · Acme Dental' }).waitFor();
    await page.getByRole('button', { name: 'Pause Contact', exact: true }).waitFor();
    await page.goto(`${c.stack.url}/console/forms/${c.contact.id}/submissions`);
    const crumbs = page.locator('.crumbs');
    await crumbs.getByRole('link', { name: 'Acme Dental' }).waitFor();
    await checkView(page, 'client-inbox', /^Submissions · Contact · Acme Dental · Intake console$/);
    expect(await crumbs.getByRole('link', { name: 'Acme Dental' }).getAttribute('href')).toBe(
      `/console/projects/${c.acme.id}`,
    );

    await page.getByRole('region', { name: 'Submissions', exact: true }).getByRole('link').first().click();
    const nav = page.getByRole('navigation', { name: 'Submissions' });
    await nav.getByRole('link', { name: 'Contact' }).waitFor();
    expect(await nav.getByRole('link').allTextContents()).toEqual(
      expect.arrayContaining(['Forms', 'Acme Dental', 'Contact', 'Submissions']),
    );
    await checkView(page, 'client-submission', /^Submission of .+ · Contact · Acme Dental · Intake console$/);
  });

  it('shows a project named like markup as text, running nothing', async () => {
    const { page } = c;
    await page.goto(`${c.stack.url}/console/forms/${c.hostile.id}/submissions`);
    const crumb = page.locator('.crumbs').getByRole('link', { name: HOSTILE });
    await crumb.waitFor();
    expect(await crumb.textContent()).toBe(HOSTILE);
    expect(await page.locator('.crumbs img, h1 img').count()).toBe(0);
    await eventually(async () => (await page.title()) === `Submissions · Contact · ${HOSTILE} · Intake console`);
    // An image element made of it would have run its onerror: alert(1), a dialog.
    expect(c.dialogs).toEqual([]);
  });
});

describe('the client named in the account’s pages', () => {
  it('names the client in the audit log’s entries about its form, and filters the log by project', async () => {
    const { page } = c;
    await page.getByRole('link', { name: 'Audit log' }).click();
    const log = page.getByRole('region', { name: 'Audit log' });
    await log.getByText('changed status of the form “Contact” (Acme Dental).', { exact: false }).waitFor();
    await checkView(page, 'client-audit-log', /^Audit log · Intake console$/);
    await page.getByLabel('Project').selectOption({ label: 'Acme Dental' });
    await eventually(async () => (await log.getByRole('row').count()) === 2, { message: 'the project’s one entry' });
  });

  it('lists usage per form with a Project column', async () => {
    const { page } = c;
    // The usage consumer counts the posts a moment after they are stored.
    await eventually(async () => ((await call(c, 'GET', '/v1/usage')) as { forms: unknown[] }).forms.length === 3);
    await page.getByRole('link', { name: 'Usage' }).click();
    const table = page.getByRole('region', { name: 'Usage per form' });
    await table.getByRole('cell', { name: 'Acme Dental', exact: true }).waitFor();
    expect(await table.getByRole('columnheader').allTextContents()).toEqual([
      'Form',
      'Project',
      'Received',
      'Spam',
      'Files',
    ]);
    const rows = await table
      .getByRole('row')
      .evaluateAll((trs) => trs.slice(1).map((tr) => [...tr.children].slice(0, 2).map((cell) => cell.textContent)));
    expect(rows).toEqual(
      expect.arrayContaining([
        ['Contact', 'Acme Dental'],
        ['Contact', ''],
        ['Contact', HOSTILE],
      ]),
    );
    await checkView(page, 'client-usage', /^Usage · Intake console$/);
  });

  it('names each found submission’s form and client on Privacy, and a trashed form’s client', async () => {
    const { page } = c;
    await page.getByRole('link', { name: 'Privacy' }).click();
    await page.getByLabel('E-mail address').fill(ADA);
    await page.getByRole('button', { name: 'Find submissions' }).click();
    const found = page.getByRole('region', { name: 'Submissions found' });
    await found.getByRole('cell', { name: 'Acme Dental', exact: true }).waitFor();
    expect(await found.getByRole('columnheader').allTextContents()).toEqual([
      'Received',
      'Form',
      'Project',
      'Status',
      'Submission',
    ]);
    await expectReflowed(page, 'Submissions found');

    await call(c, 'DELETE', `/v1/forms/${c.contact.id}`);
    await page.goto(`${c.stack.url}/console/forms/trash`);
    const trash = page.getByRole('region', { name: 'Forms in the trash' });
    await trash.getByRole('cell', { name: 'Acme Dental', exact: true }).waitFor();
    await trash.getByRole('button', { name: 'Restore Contact · Acme Dental' }).waitFor();
    await checkView(page, 'client-trash', /^Trash · Intake console$/);
  });
});

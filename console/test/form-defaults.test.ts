import type { Locator } from 'playwright-core';
import { screenshotDir } from './browser';
import { checkView, ownerApi, useOwnerConsole } from './owner';

/**
 * A client's settings in the console, in Chromium over the real stack: a project's form defaults set on its page and
 * shown on its forms' settings as “From <client>”, a setting made the form's own and given back, the question before
 * unsaved edits are lost, a form duplicated and one made from a template, and a project started from another's forms.
 */
jest.setTimeout(180_000);

const c = useOwnerConsole();

type Form = { id: string; name: string; inherited: string[]; mail_from_name: string | null } & Record<string, unknown>;

/** The management API as the owner's key calls it (to set up, and to check what the console saved). */
const call = ownerApi(c);
const formOf = (id: string) => call<Form>('GET', `/v1/forms/${id}`);

/** A screenshot of one part of the page as it is now, when CONSOLE_SCREENSHOTS is set. */
async function shot(part: Locator, name: string) {
  const dir = screenshotDir();
  if (dir) await part.screenshot({ path: `${dir}/${name}.png` });
}

let client: { id: string };
let contact: Form;

beforeAll(async () => {
  client = await call('POST', '/v1/projects', { name: 'Acme Dental' });
  contact = await call<Form>('POST', '/v1/forms', { name: 'Contact', project_id: client.id });
  await call('POST', '/v1/forms', { name: 'Quote', project_id: client.id, mail_from_name: 'Quotes desk' });
});

describe('a client’s form defaults', () => {
  it('are set on the project’s page, saved together, and written into its forms', async () => {
    const { page, stack } = c;
    await page.goto(`${stack.url}/console/projects/${client.id}`);
    const defaults = page.getByRole('form', { name: 'Form defaults' });
    await defaults.getByLabel('Notify e-mails').fill('leads@agency.example');
    await defaults.getByLabel('Sender').fill('Acme Dental');
    await defaults.getByLabel('Thank-you title').fill('Thank you from Acme Dental');
    await defaults.getByLabel('Block disposable e-mail addresses').check();
    await defaults.getByText('Changes not saved yet.').waitFor();
    await defaults.getByRole('button', { name: 'Save form defaults' }).click();
    await defaults.getByRole('status').filter({ hasText: 'Form defaults saved.' }).waitFor();
    await defaults.getByText('Changes not saved yet.').waitFor({ state: 'detached' });
    expect((await call('GET', `/v1/projects/${client.id}`)).form_defaults).toEqual({
      notify_emails: ['leads@agency.example'],
      mail_from_name: 'Acme Dental',
      pages: { thank_you: { title: 'Thank you from Acme Dental' } },
      spam_rules: { block_disposable: true },
    });
    expect(await formOf(contact.id)).toMatchObject({
      notify_emails: ['leads@agency.example'],
      mail_from_name: 'Acme Dental',
      inherited: ['notify_emails', 'mail_from_name', 'pages', 'spam_rules'],
    });
    await checkView(page, 'project-form-defaults', /^Acme Dental · Intake console$/);
  });

  it('show on a form’s settings as “From Acme Dental”; a change makes one the form’s own, “Use Acme Dental’s” gives it back', async () => {
    const { page, stack } = c;
    await page.goto(`${stack.url}/console/forms/${contact.id}`);
    const mail = page.getByRole('form', { name: 'Notification e-mail' });
    expect(await mail.getByLabel('Sender').inputValue()).toBe('Acme Dental');
    await mail.getByText('From Acme Dental', { exact: false }).waitFor();
    expect(await page.getByText(/^From Acme Dental/).count()).toBe(4);
    await checkView(page, 'form-inherited-settings', /^Settings · Contact · Acme Dental · Intake console$/);

    await mail.getByLabel('Sender').fill('Front desk');
    await mail.getByRole('button', { name: 'Use Acme Dental’s sender' }).waitFor();
    await shot(mail, 'form-overridden-sender-1280');
    await mail.getByRole('button', { name: 'Save notification e-mail' }).click();
    await mail.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await formOf(contact.id)).toMatchObject({
      mail_from_name: 'Front desk',
      inherited: ['notify_emails', 'pages', 'spam_rules'],
    });
    // The other settings the section saved stay the client's.
    await call('PATCH', `/v1/projects/${client.id}`, {
      form_defaults: { notify_emails: ['leads@agency.example'], mail_from_name: 'Acme Dental Clinic' },
    });
    await page.reload();
    await mail.getByRole('button', { name: 'Use Acme Dental’s sender' }).click();
    expect(await mail.getByLabel('Sender').inputValue()).toBe('Acme Dental Clinic');
    await mail.getByText(/^From Acme Dental/).waitFor();
    await mail.getByRole('button', { name: 'Save notification e-mail' }).click();
    await mail.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await formOf(contact.id)).toMatchObject({
      mail_from_name: 'Acme Dental Clinic',
      inherited: ['notify_emails', 'mail_from_name'],
    });
    await page.setViewportSize({ width: 390, height: 900 });
    await shot(mail, 'form-inherited-sender-390');
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});

describe('unsaved edits', () => {
  it('are not lost without asking: a link, the back button, or closing the tab', async () => {
    const { page, stack } = c;
    // Arrived at the settings within the console, so back is the console's own navigation.
    await page.goto(`${stack.url}/console/forms/${contact.id}/submissions`);
    await page.getByRole('link', { name: 'Settings and snippets' }).click();
    const settings = page.getByRole('form', { name: 'Notification e-mail' });
    await page.getByLabel('Redirect URL').fill('https://acme.example/thanks');
    await settings.getByLabel('Subject').fill('Enquiry from {{name}}');
    await page.getByText('Changes not saved yet.').first().waitFor();

    await page.getByRole('link', { name: 'Submissions', exact: true }).click();
    const ask = page.getByRole('dialog', { name: 'Leave without saving?' });
    await ask.getByText('Not saved: Settings, Notification e-mail.').waitFor();
    await checkView(page, 'unsaved-guard', /^Settings · Contact · Acme Dental · Intake console$/);
    await ask.getByRole('button', { name: 'Cancel' }).click();
    expect(page.url()).toBe(`${stack.url}/console/forms/${contact.id}`);
    expect(await page.getByLabel('Redirect URL').inputValue()).toBe('https://acme.example/thanks');

    await page.goBack({ waitUntil: 'commit' });
    await ask.waitFor();
    expect(page.url()).toBe(`${stack.url}/console/forms/${contact.id}`);
    await ask.getByRole('button', { name: 'Cancel' }).click();

    // Closing the tab asks the browser's own question.
    const asked = new Promise<string>((resolve) =>
      page.once('dialog', (d) => {
        resolve(d.type());
        void d.dismiss();
      }),
    );
    await page.close({ runBeforeUnload: true });
    expect(await asked).toBe('beforeunload');
    expect(page.isClosed()).toBe(false);

    await page.getByRole('link', { name: 'Submissions', exact: true }).click();
    await ask.getByRole('button', { name: 'Leave without saving' }).click();
    await page.waitForURL(`${stack.url}/console/forms/${contact.id}/submissions`);
    expect((await formOf(contact.id)).redirect_url).toBeNull();
    // Nothing unsaved: links go at once.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Forms' }).click();
    await page.getByRole('heading', { name: 'Forms', level: 1 }).waitFor();
    expect(await ask.isVisible()).toBe(false);
  });
});

describe('copies and templates', () => {
  it('duplicates a form into another client’s project, where it takes that client’s defaults', async () => {
    const { page, stack } = c;
    const other = await call('POST', '/v1/projects', { name: 'Bright Smiles' });
    await call('PATCH', `/v1/projects/${other.id}`, { form_defaults: { notify_emails: ['bright@agency.example'] } });
    await page.goto(`${stack.url}/console/forms/${contact.id}`);
    await page.getByRole('button', { name: 'Duplicate form…' }).click();
    const duplicate = page.getByRole('dialog', { name: 'Duplicate “Contact · Acme Dental”' });
    expect(await duplicate.getByLabel('Name').inputValue()).toBe('Contact (copy)');
    await duplicate.getByLabel('Name').fill('Contact');
    await duplicate.getByLabel('Project').selectOption({ label: 'Bright Smiles' });
    await checkView(page, 'form-duplicate-dialog', /^Settings · Contact · Acme Dental · Intake console$/);
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await shot(duplicate, `duplicate-dialog-${width}`);
    }
    await duplicate.getByRole('button', { name: 'Duplicate', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Form “Contact · Bright Smiles” created as a copy of “Contact · Acme Dental”.' })
      .waitFor();
    const copyId = page.url().split('/').pop() as string;
    expect(await formOf(copyId)).toMatchObject({
      name: 'Contact',
      notify_emails: ['bright@agency.example'],
      mail_from_name: 'Acme Dental Clinic',
      inherited: ['notify_emails'],
    });
    expect(await page.getByLabel('Notify e-mails').inputValue()).toBe('bright@agency.example');
    await checkView(page, 'form-duplicated', /^Settings · Contact · Bright Smiles · Intake console$/);
  });

  it('makes a new form from a template, and a project from another client’s forms', async () => {
    const { page, stack } = c;
    await page.goto(`${stack.url}/console/forms/new?project=${client.id}`);
    await page.getByLabel('Name').fill('Careers');
    await page.getByLabel('Start from').selectOption({ label: 'Job application' });
    await page.getByText(/a file field cv/).waitFor();
    await checkView(page, 'new-form-template', /^New form · Intake console$/);
    await page.getByRole('button', { name: 'Create form' }).click();
    await page.getByRole('status').filter({ hasText: 'Form “Careers” created.' }).waitFor();
    const careers = await formOf(page.url().split('/').pop() as string);
    expect(careers).toMatchObject({
      spam_rules: { required_fields: ['name', 'email', 'cv'], block_disposable: true },
      notify_emails: ['leads@agency.example'],
      inherited: ['notify_emails', 'mail_from_name'],
    });

    await page.getByRole('link', { name: 'Dashboard' }).click();
    const create = page.getByRole('form', { name: 'New project' });
    await create.getByLabel('Name').fill('Harbour Dental');
    await create.getByLabel('Start from another client’s forms').selectOption({ label: 'Acme Dental (3 forms)' });
    await shot(create, 'new-project-from-another-1280');
    await create.getByRole('button', { name: 'Create project' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Project “Harbour Dental” created with 3 forms copied.' })
      .waitFor();
    const forms = page.getByRole('region', { name: 'Forms of the project' });
    for (const name of ['Contact', 'Quote', 'Careers']) await forms.getByRole('link', { name }).waitFor();
    expect(await page.getByRole('form', { name: 'Form defaults' }).getByLabel('Sender').inputValue()).toBe(
      'Acme Dental Clinic',
    );
    await checkView(page, 'project-from-another', /^Harbour Dental · Intake console$/);
    // No script error on the way (a failed request, such as the sign-in page's look for a session, is said apart).
    expect(c.consoleErrors.filter((e) => !e.startsWith('Failed to load resource'))).toEqual([]);
  });
});

import { uniqueEmail } from '@intake/shared/testing';
import { checkView, ownerApi, useOwnerConsole } from './owner';

/**
 * Mail fit to forward to a client, in Chromium over the real stack: the time zone a form's mails give times in, set on
 * the form and as a client's default that its forms take; and the join page of a client's staff naming the client.
 */
jest.setTimeout(180_000);

const c = useOwnerConsole();
const call = ownerApi(c);
type Form = { id: string; time_zone: string; inherited: string[] };

describe('the mails’ time zone', () => {
  it('is chosen on a form’s Notification e-mail and saved as the form’s own', async () => {
    const { page, stack } = c;
    const form = await call<Form>('POST', '/v1/forms', { name: 'Contact' });
    expect(form.time_zone).toBe('UTC');
    await page.goto(`${stack.url}/console/forms/${form.id}`);
    const mail = page.getByRole('form', { name: 'Notification e-mail' });
    const zone = mail.getByLabel('Time zone');
    expect(await zone.inputValue()).toBe('UTC');
    await zone.selectOption('Europe/Paris');
    await mail.getByText('Changes not saved yet.').waitFor();
    await mail.getByRole('button', { name: 'Save notification e-mail' }).click();
    await mail.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await call<Form>('GET', `/v1/forms/${form.id}`)).time_zone).toBe('Europe/Paris');
    await page.reload();
    expect(await page.getByRole('form', { name: 'Notification e-mail' }).getByLabel('Time zone').inputValue()).toBe(
      'Europe/Paris',
    );
    await checkView(page, 'form-mail-time-zone', /^Settings · Contact · Intake console$/);
  });

  it('is set as a client’s default, which its forms take and show as “From <client>”', async () => {
    const { page, stack } = c;
    const client = await call('POST', '/v1/projects', { name: 'Hale Dental' });
    const form = await call<Form>('POST', '/v1/forms', { name: 'Booking', project_id: client.id });
    await page.goto(`${stack.url}/console/projects/${client.id}`);
    const defaults = page.getByRole('form', { name: 'Form defaults' });
    const zone = defaults.getByLabel('Time zone');
    expect(await zone.inputValue()).toBe('');
    await zone.selectOption('America/New_York');
    await defaults.getByRole('button', { name: 'Save form defaults' }).click();
    await defaults.getByRole('status').filter({ hasText: 'Form defaults saved.' }).waitFor();
    expect((await call('GET', `/v1/projects/${client.id}`)).form_defaults).toEqual({ time_zone: 'America/New_York' });
    expect(await call<Form>('GET', `/v1/forms/${form.id}`)).toMatchObject({
      time_zone: 'America/New_York',
      inherited: ['time_zone'],
    });
    await checkView(page, 'project-time-zone', /^Hale Dental · Intake console$/);

    await page.goto(`${stack.url}/console/forms/${form.id}`);
    const mail = page.getByRole('form', { name: 'Notification e-mail' });
    expect(await mail.getByLabel('Time zone').inputValue()).toBe('America/New_York');
    await mail.getByText('From Hale Dental', { exact: false }).waitFor();
  });
});

describe('the join page of a client’s staff', () => {
  it('names the client whose forms the invitation is to', async () => {
    const client = await call('POST', '/v1/projects', { name: 'Summit Roofing' });
    const email = uniqueEmail('office');
    const invited = await call<{ invitation_url: string }>('POST', '/v1/members', {
      email,
      role: 'viewer',
      project_ids: [client.id],
    });
    const context = await c.browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const joining = await context.newPage();
      await joining.goto(invited.invitation_url);
      // The page asks the API what the link is for: on a loaded machine that can take a while.
      const invitation = joining.getByText(/ is invited to /);
      await invitation.waitFor({ timeout: 60_000 });
      expect(await invitation.innerText()).toBe(
        `${email} is invited to the forms of Summit Roofing at Acme as viewer.`,
      );
      await checkView(joining, 'join-client', /^Join · Intake console$/);
    } finally {
      await context.close();
    }
  });
});

import { eventually, factories } from '@intake/shared/testing';
import { checkView, expectReflowed, useOwnerConsole } from './owner';
import { acmeBooking } from './clients';

/**
 * Working across clients, in real Chromium over the real stack: a search of every form (accents and case ignored,
 * each find named with its form and client), each client's unread on the dashboard, and Usage narrowed to one client.
 */
jest.setTimeout(120_000);

const c = useOwnerConsole();

async function setup() {
  const { db, acme, booking } = await acmeBooking(c);
  const bolt = await factories.project(db, c.account.id, 'Bolt Garage');
  const quote = await factories.form(db, c.account.id, { name: 'Quote', project_id: bolt.id });
  const store = (formId: string, name: string, email: string) =>
    factories.submission(c.stack.platform, { accountId: c.account.id, formId, payload: { name, email } });
  await store(booking.id, 'Anna Müller', 'anna@acme.example');
  const jurgen = await store(quote.id, 'Jürgen MULLER', 'j@bolt.example');
  await store(quote.id, 'Tom Jones', 'tom@bolt.example');
  return { acme, bolt, booking, quote, jurgen };
}

describe('across clients', () => {
  it('searches every form from the Forms page, and narrows the finds to a client', async () => {
    const { page } = c;
    const { acme, jurgen } = await setup();
    await page.goto(`${c.stack.url}/console/forms`);
    const search = page.getByRole('search', { name: 'Search every form' });
    await search.getByLabel('Search every form').fill('muller');
    await search.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL('**/console/search?q=muller');
    const found = page.getByRole('region', { name: 'Submissions found' });
    const rows = found.locator('tbody tr');
    await rows.nth(1).waitFor();
    expect(await rows.count()).toBe(2);
    // Newest first, each named with its form and client.
    expect(await rows.nth(0).innerText()).toMatch(/Jürgen MULLER · j@bolt.example[\s\S]*Quote[\s\S]*Bolt Garage/);
    expect(await rows.nth(1).innerText()).toMatch(/Anna Müller · anna@acme.example[\s\S]*Booking[\s\S]*Acme Dental/);
    await checkView(page, 'search-across-forms', /^Search · Intake console$/);
    await expectReflowed(page, 'Submissions found');

    await page.getByLabel('Client').selectOption({ label: 'Acme Dental' });
    await page.waitForURL(`**/console/search?q=muller&project=${acme.id}`);
    await found.getByRole('link', { name: /^Anna Müller/ }).waitFor();
    expect(await rows.count()).toBe(1);

    await page.goto(`${c.stack.url}/console/search?q=${encodeURIComponent('JURGEN')}`);
    await found.getByRole('link', { name: /^Jürgen MULLER/ }).click();
    await page.waitForURL(`**/console/submissions/${jurgen.id}`);
    await page.goto(`${c.stack.url}/console/search?q=nobody`);
    await page.getByText('Nothing found for “nobody”.').waitFor();
  });

  it('shows each client’s unread on the dashboard', async () => {
    const { page } = c;
    await page.goto(`${c.stack.url}/console/dashboard`);
    const table = page.getByRole('region', { name: 'Projects at a glance' });
    const unreadOf = async (client: string) => {
      const row = table.getByRole('row').filter({ has: page.getByRole('link', { name: client, exact: true }) });
      await row.waitFor();
      return (await row.getByRole('cell').first().innerText()).trim();
    };
    // Bolt Garage's Jürgen was opened by the search test above: Tom Jones's is its one unread.
    expect([await unreadOf('Acme Dental'), await unreadOf('Bolt Garage')]).toEqual(['1', '1']);
    await checkView(page, 'dashboard-unread', /^Dashboard · Intake console$/);
  });

  it('narrows Usage to one client', async () => {
    const { page } = c;
    // The usage consumer counts the posts a moment after they are stored.
    const usage = async () => {
      const res = await fetch(`${c.stack.url}/v1/usage`, {
        headers: { authorization: `Bearer ${c.account.managementKey}` },
      });
      return ((await res.json()) as { forms: unknown[] }).forms.length;
    };
    await eventually(async () => (await usage()) >= 2);
    await page.goto(`${c.stack.url}/console/usage`);
    const perForm = page.getByRole('region', { name: 'Usage per form' });
    await perForm.getByRole('rowheader', { name: 'Quote' }).waitFor();
    await page.getByLabel('Client').selectOption({ label: 'Acme Dental' });
    await page.waitForURL('**/console/usage?project=*');
    await perForm.getByRole('rowheader', { name: 'Booking' }).waitFor();
    expect(await perForm.getByRole('rowheader').allInnerTexts()).toEqual(['Booking']);
    await checkView(page, 'usage-one-client', /^Usage · Intake console$/);
  });
});

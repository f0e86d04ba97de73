import { factories } from '@intake/shared/testing';
import { checkView, expectReflowed, useOwnerConsole } from './owner';
import { acmeBooking } from './clients';

/**
 * Deleted submissions found again, in real Chromium over the real stack: the Trash page lists them across forms, most
 * recently deleted first, named with form and client; a client's or a form's alone (from the inbox's Trash link);
 * Restore and Delete now.
 */
jest.setTimeout(120_000);

async function setup() {
  const { db, acme, booking } = await acmeBooking(c);
  const quote = await factories.form(db, c.account.id, { name: 'Quote' });
  const store = (formId: string, name: string, email: string) =>
    factories.submission(c.stack.platform, { accountId: c.account.id, formId, payload: { name, email } });
  const ada = await store(booking.id, 'Ada Lovelace', 'ada@acme.example');
  const bob = await store(quote.id, 'Bob Muller', 'bob@example.com');
  await store(booking.id, 'Kept', 'kept@example.com');
  for (const id of [ada.id, bob.id]) {
    const res = await fetch(`${c.stack.url}/v1/submissions/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${c.account.managementKey}` },
    });
    expect(res.status).toBe(204);
  }
  return { acme, booking, quote, ada, bob };
}

const c = useOwnerConsole();

describe('the Trash page’s submissions', () => {
  it('lists deleted submissions with form and client, per client and per form, restores and deletes now', async () => {
    const { page } = c;
    const { acme, booking, ada, bob } = await setup();
    await page.goto(`${c.stack.url}/console/forms/trash`);
    const table = page.getByRole('region', { name: 'Submissions in the trash' });
    const rows = table.locator('tbody tr');
    await rows.nth(1).waitFor();
    // Most recently deleted first, each named with its form and (for a client's form) the client.
    expect(await rows.nth(0).innerText()).toMatch(/Bob Muller · bob@example.com[\s\S]*Quote/);
    expect(await rows.nth(1).innerText()).toMatch(/Ada Lovelace · ada@acme.example[\s\S]*Booking[\s\S]*Acme Dental/);
    await checkView(page, 'submission-trash', /^Trash · Intake console$/);
    await expectReflowed(page, 'Submissions in the trash');

    // One client's.
    await page.getByLabel('Client').selectOption({ label: 'Acme Dental' });
    await page.waitForURL(`**/console/forms/trash?project=${acme.id}`);
    await table.getByRole('button', { name: /^Restore Ada Lovelace/ }).waitFor();
    expect(await rows.count()).toBe(1);

    // One form's, from its inbox's Trash link.
    await page.goto(`${c.stack.url}/console/forms/${booking.id}/submissions`);
    await page.getByRole('navigation', { name: 'Submission views' }).getByRole('link', { name: 'Trash' }).click();
    await page.waitForURL(`**/console/forms/trash?form=${booking.id}`);
    await page.getByText('Only “Booking”’s.').waitFor();
    expect(await rows.count()).toBe(1);

    await table.getByRole('button', { name: /^Restore Ada Lovelace/ }).click();
    await page.getByRole('status').filter({ hasText: 'Restored to “Booking · Acme Dental”.' }).waitFor();
    await page.getByText('No deleted submissions.').waitFor();
    const row = (id: string) => c.stack.platform.db('submissions').where({ id }).first('deleted_at');
    expect(await row(ada.id)).toEqual({ deleted_at: null });

    await page.getByRole('link', { name: 'Show every form’s' }).click();
    await table.getByRole('button', { name: /^Delete now Bob Muller/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this submission for good?' });
    await dialog.getByText('“Bob Muller · bob@example.com” and its files are deleted now.').waitFor();
    await dialog.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted for good, with its files.' }).waitFor();
    expect(await row(bob.id)).toBeUndefined();
    expect(c.consoleErrors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  });
});

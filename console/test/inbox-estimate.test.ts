import { factories } from '@intake/shared/testing';
import { useOwnerConsole } from './owner';

/**
 * A form with more submissions than the API counts exactly (10,000): the inbox says "about N", from the planner's
 * estimate, wherever it shows how many match, and an exact figure again for a filter that matches few.
 */
jest.setTimeout(120_000);

const ROWS = 10_500;

describe('the inbox of a large form', () => {
  const c = useOwnerConsole();
  let formId = '';
  beforeAll(async () => {
    const { db } = c.stack.platform;
    formId = (await factories.form(db, c.account.id)).id;
    await db.raw(
      `INSERT INTO submissions (id, account_id, form_id, status, payload, received_at)
       SELECT 'sub_' || substr(md5(:formId || g), 1, 26), :accountId, :formId, 'received',
              json_build_object('message', CASE WHEN g = 7 THEN 'the needle' ELSE 'Bulk ' || g END),
              now() - g * interval '1 minute'
       FROM generate_series(1, :rows::int) g`,
      { accountId: c.account.id, formId, rows: ROWS },
    );
    await db.raw('ANALYZE submissions');
  });

  it('shows the count as “about N” beyond 10,000, in the list and in a selection of every match', async () => {
    const { page, stack } = c;
    await page.goto(`${stack.url}/console/forms/${formId}/submissions`);
    const count = page.locator('.list-controls .count');
    await count.filter({ hasText: 'in the inbox' }).waitFor();
    const text = await count.innerText();
    // Where the page is, then the total in two significant figures: an estimate is shown no more exactly than it is.
    expect(text).toMatch(/^1–25 of about \d\d,000 submissions in the inbox$/);
    const about = Number(/about ([\d,]+)/.exec(text)![1]!.replace(/,/g, ''));
    expect(about).toBeGreaterThan(ROWS / 2);
    expect(about).toBeLessThan(ROWS * 2);
    const shown = about.toLocaleString('en-US');

    await page.getByLabel('Select all on this page').check();
    await page.getByRole('button', { name: `Select all of about ${shown} submissions that match` }).click();
    await page.getByText(`All of about ${shown} submissions that match selected`).waitFor();
    await page.getByRole('button', { name: 'Delete selected' }).click();
    const dialog = page.getByRole('dialog', { name: `Delete about ${shown} submissions?` });
    await dialog.waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    // The page behind a modal dialog is inert: type into it only once the dialog has closed.
    await dialog.waitFor({ state: 'hidden' });

    await page.getByLabel('Search').fill('needle');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/[?&]q=needle/);
    await count.filter({ hasText: /^1 submission matching$/ }).waitFor();
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { factories } from '@intake/shared/testing';
import { screenshotDir, seriousViolations } from './browser';
import { tombstoneSubmissions } from '../../services/management/src/lifecycle/purge.repository';
import { checkView, expectReflowed, useOwnerConsole, type OwnerConsole } from './owner';

/** The console's Privacy page and a form's retention settings, in real Chromium over the real stack. */
jest.setTimeout(60_000);

const ADA = 'ada@example.test';

/** The owner's console and a form with two submissions from Ada (one written otherwise) and one from Bob; on Privacy. */
function usePrivacyConsole() {
  const c = useOwnerConsole() as OwnerConsole & { form: { id: string } };
  beforeAll(async () => {
    c.form = await factories.form(c.stack.platform.db, c.account.id);
    const payloads: Record<string, string>[] = [
      { email: ` ${ADA.toUpperCase()} `, message: 'first' },
      { email: ADA },
      { email: 'bob@x.test' },
    ];
    for (const payload of payloads)
      await factories.submission(c.stack.platform, { accountId: c.account.id, formId: c.form.id, payload });
    await c.page.getByRole('link', { name: 'Privacy' }).click();
  });
  return c;
}

/** The Excel download: in the person's zone (the HTTP tests open the workbook in openpyxl); a workbook is a zip. */
async function expectWorkbookDownload(page: Page) {
  const [workbook] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Download for Excel' }).click(),
  ]);
  expect(workbook.suggestedFilename()).toBe('data-subject.xlsx');
  expect(new URL(workbook.url()).searchParams.get('tz')).toBeTruthy();
  const bytes = readFileSync((await workbook.path()) as string);
  expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK');
}

/** The owner chooses a client on Privacy: what is found, downloaded and erased is that client’s alone. */
async function answersForOneClient(c: OwnerConsole & { form: { id: string } }) {
  const { page } = c;
  const client = await factories.project(c.stack.platform.db, c.account.id, 'Acme Dental');
  const clientForm = await factories.form(c.stack.platform.db, c.account.id, { project_id: client.id });
  const theirs = await factories.submission(c.stack.platform, {
    accountId: c.account.id,
    formId: clientForm.id,
    payload: { email: ADA, message: 'to the client' },
  });
  await factories.submission(c.stack.platform, {
    accountId: c.account.id,
    formId: c.form.id,
    payload: { email: ADA },
  });
  await page.reload();
  await page.getByLabel('E-mail address').fill(ADA);
  await page.getByLabel('Project').selectOption({ label: 'Acme Dental' });
  await page.getByRole('button', { name: 'Find submissions' }).click();
  await page.getByRole('heading', { name: `1 submission with ${ADA}` }).waitFor();
  expect(await seriousViolations(page)).toEqual([]);
  const shots = screenshotDir();
  if (shots) await page.screenshot({ path: path.join(shots, 'privacy-client.png'), fullPage: true });
  const href = await page.getByRole('link', { name: 'Download as NDJSON' }).getAttribute('href');
  expect(new URL(href as string, c.stack.url).searchParams.get('project_id')).toBe(client.id);
  const others = () => c.stack.platform.db('submissions').where({ form_id: c.form.id }).count({ n: '*' }).first();
  const before = await others();
  await page.getByRole('button', { name: 'Erase them…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Erase' }).click();
  await page.getByText(`Erased 1 submission of ${ADA}.`).waitFor();
  expect(await c.stack.platform.db('submissions').where({ id: theirs.id }).first()).toBeUndefined();
  // Ada's submissions to the account's own form are not the client's: they stay.
  expect(await others()).toEqual(before);
}

describe('console: privacy', () => {
  const c = usePrivacyConsole();

  it('finds a person’s submissions, downloads them as NDJSON and erases them', async () => {
    const { page } = c;
    await page.getByLabel('E-mail address').fill(ADA);
    await page.getByRole('button', { name: 'Find submissions' }).click();
    await page.getByRole('heading', { name: `2 submissions with ${ADA}` }).waitFor();
    expect(await page.getByRole('region', { name: 'Submissions found' }).getByRole('row').count()).toBe(3);
    expect(await seriousViolations(page)).toEqual([]);
    await expectReflowed(page, 'Submissions found');
    const shots = screenshotDir();
    if (shots) await page.screenshot({ path: path.join(shots, 'privacy.png'), fullPage: true });

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download as NDJSON' }).click(),
    ]);
    const lines = readFileSync(await download.path(), 'utf8')
      .trimEnd()
      .split('\n');
    expect(lines.map((l) => JSON.parse(l).payload.email).sort()).toEqual([` ${ADA.toUpperCase()} `, ADA].sort());
    await expectWorkbookDownload(page);

    await page.getByRole('button', { name: 'Erase them…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Erase' }).click();
    await page.getByText(`Erased 2 submissions of ${ADA}.`).waitFor();
    expect(await c.stack.platform.db('submissions').where({ form_id: c.form.id }).count({ n: '*' }).first()).toEqual({
      n: 1,
    });
  });

  it('answers for one client: what it finds, downloads and erases is that client’s alone', () =>
    answersForOneClient(c));

  it('refuses what is not an e-mail address, saying so', async () => {
    const { page } = c;
    await page.getByLabel('E-mail address').fill('not-an-address');
    await page.getByRole('button', { name: 'Find submissions' }).click();
    // The browser's own check stops it first: nothing was asked of the server.
    expect(
      await page
        .getByLabel('E-mail address')
        .evaluate((el) => (el as unknown as { validity: { valid: boolean } }).validity.valid),
    ).toBe(false);
  });

  it('sets a form’s retention in its settings', async () => {
    const { page } = c;
    await page.goto(`${c.stack.url}/console/forms/${c.form.id}`);
    await page.getByLabel('Delete submissions after (days)').fill('90');
    await page.getByLabel('Delete spam after (days)').fill('');
    await page.getByLabel('Delete after delivery').check();
    await page.getByRole('button', { name: 'Save retention' }).click();
    await page.getByText('Retention saved.').waitFor();
    expect(
      await c.stack.platform
        .db('forms')
        .where({ id: c.form.id })
        .first('retention_days', 'spam_retention_days', 'delete_after_delivery'),
    ).toEqual({ retention_days: 90, spam_retention_days: null, delete_after_delivery: true });
    await page.getByLabel('Delete submissions after (days)').fill('9999');
    await page.getByRole('button', { name: 'Save retention' }).click();
    // In words, not the schema's ("retention_days must be <= 3650").
    const alert = page.getByRole('alert').filter({ hasText: 'Retention days must be at most 3650' });
    await alert.waitFor();
    expect(await alert.innerText()).not.toMatch(/retention_days|<=|schema/);
  });

  it('says of a tombstone that its fields and files were removed after delivery, and when', async () => {
    const { page } = c;
    const stored = await factories.submission(c.stack.platform, {
      accountId: c.account.id,
      formId: c.form.id,
      payload: { message: 'delivered, then let go' },
    });
    await c.stack.platform.db.transaction((trx) =>
      tombstoneSubmissions(trx, { formId: c.form.id, ids: [stored.id], now: new Date() }),
    );
    await page.goto(`${c.stack.url}/console/submissions/${stored.id}`);
    await page.getByText(/Its fields and files were removed .*, once every webhook had it/).waitFor();
    await checkView(page, 'submission-tombstone', /· Intake console$/);
  });
});

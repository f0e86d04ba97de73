import type { Browser } from 'playwright-core';
import { smtpSink, uniqueEmail, type SmtpSink } from '@intake/shared/testing';
import { launchChromium } from './browser';
import { checkView } from './owner';
import { startStack } from './stack';

/**
 * Accounts made in the console, in Chromium over the real stack with ACCOUNT_CREATION=anyone and an SMTP stand-in:
 * signing up from the sign-in page through the mailed link, then, as the owner that makes, another account from the
 * account menu, and switching between the two.
 */
jest.setTimeout(120_000);

let stack: Awaited<ReturnType<typeof startStack>>;
let smtp: SmtpSink;
let browser: Browser;
beforeAll(async () => {
  smtp = await smtpSink();
  [stack, browser] = await Promise.all([
    startStack({
      ACCOUNT_CREATION: 'anyone',
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      MAIL_FROM: 'Intake <no-reply@intake.test>',
    }),
    launchChromium(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await smtp?.close();
});

describe('accounts from the console', () => {
  it('signs up through the mailed link, then makes a second account from the account menu and switches back', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const asked = await context.newPage();
    await asked.goto(`${stack.url}/console`);
    await asked.getByRole('link', { name: 'Sign up' }).click();
    await checkView(asked, 'sign-up', /^Sign up · Intake console$/);
    const email = uniqueEmail('agency');
    await asked.getByLabel('Email').fill(email);
    await asked.getByLabel('Account name').fill('Northwind Agency');
    await asked.getByRole('button', { name: 'Send me the link' }).click();
    await asked
      .getByRole('status')
      .filter({ hasText: `a link to confirm ${email} is on its way` })
      .waitFor();

    const mail = smtp.mails.find((m) => m.to.includes(email));
    const link = /(http:\/\/\S+\/console\/sign-up#[\w-]+)/.exec(mail?.text ?? '')?.[1] as string;
    expect(link).toContain(stack.url);
    // Opened from the mail, in a tab of its own.
    const page = await context.newPage();
    await page.goto(link);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create my account' }).click();
    await page
      .getByText(/at least 12 characters/)
      .first()
      .waitFor();
    await page.getByLabel('Password').fill('correct horse battery staple');
    await page.getByRole('button', { name: 'Create my account' }).click();
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await page.getByText(`${email} · owner`).waitFor();

    await page.getByRole('link', { name: 'New account' }).click();
    await page.getByLabel('Name').fill('Second brand');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('status').filter({ hasText: 'Account “Second brand” created: you are its owner.' }).waitFor();
    const menu = page.getByLabel('Account', { exact: true });
    expect(await menu.locator('option:checked').textContent()).toBe('Second brand (owner)');
    expect(await menu.locator('option').allTextContents()).toEqual(
      expect.arrayContaining(['Northwind Agency (owner)', 'Second brand (owner)']),
    );
    await checkView(page, 'new-account-dashboard', /^Dashboard · Intake console$/);
    await menu.selectOption({ label: 'Northwind Agency (owner)' });
    await page.waitForURL(/\/console\/forms$/);
    expect(await page.getByLabel('Account', { exact: true }).locator('option:checked').textContent()).toBe(
      'Northwind Agency (owner)',
    );
  });
});

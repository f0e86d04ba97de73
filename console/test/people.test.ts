import type { Browser, Page } from 'playwright-core';
import { generate, generateSecret } from 'otplib';
import {
  addTestMember,
  emptyTestDatabaseUrl,
  factories,
  memberSessionHeaders,
  uniqueEmail,
} from '@intake/shared/testing';
import { hashPassword } from '../../services/management/src/people/passwords';
import { launchChromium } from './browser';
import { checkView, expectReflowed } from './owner';
import { startStack } from './stack';

/** People in the console, in real Chromium over the real stack: password sign-in, Members, invitations, Audit log. */
jest.setTimeout(90_000);

const PASSWORD = 'a long owner passphrase';

interface Ctx {
  stack: Awaited<ReturnType<typeof startStack>>;
  browser: Browser;
  account: { id: string; managementKey: string };
  owner: string;
}

function usePeopleConsole(): Ctx {
  const c = {} as Ctx;
  beforeAll(async () => {
    [c.stack, c.browser] = await Promise.all([startStack(), launchChromium()]);
    const { db } = c.stack.platform;
    c.account = await factories.account(db, { name: 'Acme' });
    c.owner = uniqueEmail('owner');
    await addTestMember(db, c.account.id, 'owner', { email: c.owner, passwordHash: await hashPassword(PASSWORD) });
  });
  afterAll(async () => {
    await c.browser?.close();
    await c.stack?.close();
  });
  return c;
}

async function newPage(c: Ctx): Promise<Page> {
  const context = await c.browser.newContext({ viewport: { width: 1280, height: 900 } });
  return context.newPage();
}

const navLinks = async (page: Page) => page.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts();

describe('console: people', () => {
  const c = usePeopleConsole();

  it('signs an owner in with e-mail and password, and shows who is signed in and the people pages', async () => {
    const page = await newPage(c);
    await page.goto(`${c.stack.url}/console`);
    await page.getByLabel('Email', { exact: true }).fill(c.owner);
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('The e-mail or password is wrong.').waitFor();
    expect(await page.getByRole('button', { name: 'Sign in with key' }).isVisible()).toBe(true);
    await checkView(page, 'people-sign-in', /^Sign in · Intake console$/);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Forms', exact: true }).waitFor();
    await page.getByText(`${c.owner} · owner`).waitFor();
    expect(await navLinks(page)).toEqual(expect.arrayContaining(['Members', 'Audit log']));
    await page.context().close();
  });

  it('invites a member, who joins through the link with a password and sees what an editor may', async () => {
    const page = await newPage(c);
    await signInAsOwner(c, page);
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members', exact: true }).waitFor();
    const editor = uniqueEmail('editor');
    await page.getByLabel('Email', { exact: true }).fill(editor);
    await page.getByLabel('Role', { exact: true }).selectOption('editor');
    await page.getByRole('button', { name: 'Invite' }).click();
    const link = page.getByText(/\/console\/join#/);
    await link.waitFor();
    const first = (await link.innerText()).trim();
    await page.getByRole('cell', { name: editor, exact: true }).waitFor();
    await checkView(page, 'members', /^Members · Intake console$/);
    await expectReflowed(page, 'Members');
    // Sent again: a new link, and the first one no longer works.
    await page.getByRole('button', { name: `Send invitation again to ${editor}` }).click();
    await page
      .getByText(/\/console\/join#/)
      .filter({ hasNotText: first })
      .waitFor();
    const url = (await link.innerText()).trim();
    expect(url).not.toBe(first);

    const joining = await newPage(c);
    await joining.goto(url);
    await joining.getByText(`${editor} is invited to Acme as editor.`).waitFor();
    await checkView(joining, 'join', /^Join · Intake console$/);
    await joining.getByLabel('Password', { exact: true }).fill('short');
    await joining.getByRole('button', { name: 'Join' }).click();
    await joining
      .getByText(/at least 12 characters/)
      .first()
      .waitFor();
    await joining.getByLabel('Password', { exact: true }).fill('the editor’s own passphrase');
    await joining.getByRole('button', { name: 'Join' }).click();
    await joining.getByRole('heading', { name: 'Forms', exact: true }).waitFor();
    expect(await navLinks(joining)).toContain('Members');
    expect(await navLinks(joining)).not.toContain('Audit log');
    await joining.context().close();
    await page.context().close();
  });
});

describe('console: joining with a password and two-factor already', () => {
  const c = usePeopleConsole();

  it('asks a person who has two-factor for their code before the invitation signs them in', async () => {
    const { db, secrets } = c.stack.platform;
    const secret = generateSecret();
    await db('users')
      .where('email', c.owner)
      .update({ totp_secret: secrets.seal(secret), totp_enabled_at: new Date(), recovery_codes: JSON.stringify([]) });
    const other = await factories.account(db, { name: 'Globex' });
    const invited = (await (
      await fetch(`${c.stack.url}/v1/members`, {
        method: 'POST',
        headers: { authorization: `Bearer ${other.managementKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: c.owner, role: 'editor' }),
      })
    ).json()) as { invitation_url: string };
    const joining = await newPage(c);
    await joining.goto(invited.invitation_url);
    await joining.getByText(`${c.owner} is invited to Globex as editor.`).waitFor();
    await joining.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await joining.getByRole('button', { name: 'Join' }).click();
    await joining.getByLabel('Authentication code').waitFor();
    await checkView(joining, 'join-code', /^Join · Intake console$/);
    await joining.getByLabel('Authentication code').fill('000000');
    await joining.getByRole('button', { name: 'Join' }).click();
    await joining.getByText('The authentication code is wrong or was used already').waitFor();
    await joining.getByLabel('Authentication code').fill(await generate({ secret }));
    await joining.getByRole('button', { name: 'Join' }).click();
    await joining.getByRole('heading', { name: 'Forms', exact: true }).waitFor();
    const account = joining.getByRole('combobox', { name: 'Account' });
    await account.waitFor();
    expect(await account.locator('option:checked').innerText()).toBe('Globex (editor)');
    await joining.context().close();
  });
});

describe('console: people, the audit log and keys', () => {
  const c = usePeopleConsole();

  it('shows the audit log to an owner in words, filtered by person and by action', async () => {
    const invitee = uniqueEmail('invitee');
    await fetch(`${c.stack.url}/v1/members`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.account.managementKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: invitee, role: 'viewer' }),
    });
    const page = await newPage(c);
    await signInAsOwner(c, page);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const table = page.getByRole('region', { name: 'Audit log' });
    await table.getByText(new RegExp(`^Key “.+” invited ${invitee.replace(/[.+]/g, '\\$&')} as viewer\\.$`)).waitFor();
    await table.getByText(`${c.owner} signed in (password).`).first().waitFor();
    await checkView(page, 'audit-log', /^Audit log · Intake console$/);
    await page.getByLabel('Person').selectOption({ label: c.owner });
    await table
      .getByText(/invited/)
      .first()
      .waitFor({ state: 'detached' });
    expect(await table.getByText(`${c.owner} signed in (password).`).count()).toBeGreaterThan(0);
    await page.getByLabel('Person').selectOption({ label: 'Anyone' });
    await page.getByLabel('Action').selectOption({ label: 'Member invited' });
    await table
      .getByText(/signed in/)
      .first()
      .waitFor({ state: 'detached' });
    expect(await table.getByText(/ invited .* as viewer\.$/).count()).toBeGreaterThan(0);
    await page.context().close();
  });
});

describe('console: what a viewer sees', () => {
  const c = usePeopleConsole();

  it('a viewer sees every page it may read, and no control its role would be refused', async () => {
    const { db } = c.stack.platform;
    const form = await factories.form(db, c.account.id);
    const posted = await fetch(`${c.stack.url}/v1/f/${form.slug}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'visitor@example.com', message: 'hello' }),
    });
    expect(posted.status).toBe(201);
    const { id: submissionId } = (await posted.json()) as { id: string };
    // Added after the post, so nothing is sent to it; its delivery log gets one failed test ping.
    const hook = await factories.webhook(c.stack.platform, { accountId: c.account.id, formId: form.id });
    await factories.delivery(db, { accountId: c.account.id, webhookId: hook.id, formId: form.id, status: 'failed' });
    const viewer = await addTestMember(db, c.account.id, 'viewer', { passwordHash: await hashPassword(PASSWORD) });
    const page = await newPage(c);
    await signIn(page, c, viewer.email);
    const controls = async (names: RegExp) => page.getByRole('button', { name: names }).count();

    expect(await navLinks(page)).toEqual(expect.arrayContaining(['Forms', 'Usage', 'Members']));
    expect(await navLinks(page)).not.toEqual(expect.arrayContaining(['Audit log']));
    expect(await navLinks(page)).not.toContain('Privacy');
    await page.getByRole('link', { name: 'Test form' }).waitFor();
    expect(await page.getByRole('link', { name: 'New form' }).count()).toBe(0);
    expect(await controls(/^(Pause|Resume)\b/)).toBe(0);
    await checkView(page, 'viewer-forms', /^Forms · Intake console$/);

    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByText('Your role may read this form’s settings').waitFor();
    expect(await page.getByRole('textbox').count()).toBe(0);
    expect(await controls(/Save|Delete/)).toBe(0);
    await checkView(page, 'viewer-form-settings', /^Test form · Intake console$|Settings/);

    await page.goto(`${c.stack.url}/console/forms/${form.id}/submissions`);
    await page
      .getByRole('checkbox', { name: /Select/ })
      .first()
      .check();
    await page.getByRole('group', { name: 'Selected submissions' }).waitFor();
    expect(await controls(/Mark selected|Delete selected/)).toBe(0);
    await page.goto(`${c.stack.url}/console/submissions/${submissionId}`);
    await page.getByRole('button', { name: 'Copy as JSON' }).waitFor();
    expect(await controls(/Mark as|^Delete$/)).toBe(0);
    // Reading it as a viewer does not try to mark it read (a change its role may not make).
    expect(await db('submissions').where({ id: submissionId }).first('read_at')).toEqual({ read_at: null });

    await page.goto(`${c.stack.url}/console/forms/${form.id}/webhooks`);
    await page.getByRole('link', { name: 'Delivery log' }).waitFor();
    expect(await page.getByLabel('Webhook URL').count()).toBe(0);
    expect(await controls(/Send test ping|Edit URL|Disable|Enable|Rotate secret|Delete|Replay/)).toBe(0);
    await checkView(page, 'viewer-webhooks', /Intake console$/);
    await page.getByRole('link', { name: 'Delivery log' }).click();
    await page.locator('details.delivery summary').first().click();
    await page.getByText('Delivery log').first().waitFor();
    expect(await controls(/Replay/)).toBe(0);

    await page.goto(`${c.stack.url}/console/privacy`);
    await page.getByText('this page needs editor or above').waitFor();
    expect(await page.getByLabel('Email').count()).toBe(0);
    await page.goto(`${c.stack.url}/console/api-keys`);
    await page.getByText('Admins and owners make and revoke this account’s keys.').waitFor();
    await checkView(page, 'viewer-api-keys', /^API keys · Intake console$/);
    await page.context().close();
  });
});

async function signInAsOwner(c: Ctx, page: Page) {
  await signIn(page, c, c.owner);
}

async function signIn(page: Page, c: Ctx, email: string) {
  await page.goto(`${c.stack.url}/console`);
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Forms', exact: true }).waitFor();
}

describe('console: removing a member who minted keys', () => {
  const c = usePeopleConsole();

  it('offers to revoke the keys they created, and the keys page shows who created each', async () => {
    const { db } = c.stack.platform;
    const leaver = await addTestMember(db, c.account.id, 'admin', { email: uniqueEmail('leaver') });
    const headers = await memberSessionHeaders(db, c.account.id, leaver.memberId);
    const minted = await fetch(`${c.stack.url}/v1/api-keys`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'management', name: 'leaver’s deploy key' }),
    });
    expect(minted.status).toBe(201);
    const page = await newPage(c);
    await signInAsOwner(c, page);
    await page.getByRole('link', { name: 'API keys' }).click();
    const keys = page.getByRole('region', { name: 'API keys' });
    await keys.getByRole('cell', { name: leaver.email, exact: true }).waitFor();
    await checkView(page, 'api-keys-created-by', /^API keys · Intake console$/);
    await expectReflowed(page, 'API keys');
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('button', { name: `Remove ${leaver.email}` }).click();
    const revoke = page.getByLabel(/Also revoke the API key they created/);
    await revoke.waitFor();
    expect(await revoke.isChecked()).toBe(true);
    await checkView(page, 'members-remove-keys', /^Members · Intake console$/);
    await page.getByRole('button', { name: 'Remove member' }).click();
    await page.getByRole('cell', { name: leaver.email, exact: true }).waitFor({ state: 'detached' });
    const row = await db('api_keys').where({ name: 'leaver’s deploy key' }).first('revoked_at');
    expect(row.revoked_at).not.toBeNull();
    await page.context().close();
  });
});

describe('console: a person in two accounts', () => {
  const c = usePeopleConsole();

  it('switches the console between their accounts from the top bar', async () => {
    const { db } = c.stack.platform;
    const other = await factories.account(db, { name: 'Globex' });
    await addTestMember(db, other.id, 'viewer', { email: c.owner });
    const form = await factories.form(db, other.id);
    await db('forms').where('id', form.id).update({ name: 'Globex contact' });
    const page = await newPage(c);
    await page.goto(`${c.stack.url}/console`);
    await page.getByLabel('Email', { exact: true }).fill(c.owner);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const account = page.getByRole('combobox', { name: 'Account' });
    const chosen = () => account.locator('option:checked').innerText();
    await account.waitFor();
    expect(await account.locator('option').allInnerTexts()).toEqual(
      expect.arrayContaining(['Acme (owner)', 'Globex (viewer)']),
    );
    expect(await chosen()).toBe('Acme (owner)');
    await checkView(page, 'account-switcher', /^Forms · Intake console$/);
    await account.selectOption({ label: 'Globex (viewer)' });
    await page.getByRole('link', { name: 'Globex contact' }).waitFor();
    expect(await chosen()).toBe('Globex (viewer)');
    expect(await navLinks(page)).not.toContain('Audit log');
    await account.selectOption({ label: 'Acme (owner)' });
    await page.getByRole('link', { name: 'Audit log' }).waitFor();
    expect(await page.getByRole('link', { name: 'Globex contact' }).count()).toBe(0);
    await page.context().close();
  });
});

describe('console: sign-in before anyone has joined', () => {
  it('offers the management key alone with the operator’s commands, then members their own way in', async () => {
    const stack = await startStack({ DATABASE_URL: await emptyTestDatabaseUrl('console_nobody_joined') });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${stack.url}/console`);
      const keyForm = page.getByRole('form', { name: 'Sign in with a management key' });
      await keyForm.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
      await page.getByText('npm run admin -- accounts create').waitFor();
      expect(await page.getByLabel('Password', { exact: true }).count()).toBe(0);
      await checkView(page, 'sign-in-empty-install', /^Sign in · Intake console$/);

      const { db } = stack.platform;
      const account = await factories.account(db);
      await addTestMember(db, account.id, 'owner', { passwordHash: await hashPassword(PASSWORD) });
      await page.reload();
      await page.getByLabel('Password', { exact: true }).waitFor();
      await keyForm.getByRole('button', { name: 'Sign in with key' }).waitFor();
      expect(await page.getByText('npm run admin -- accounts create').count()).toBe(0);
      await page.getByText('a management key is for scripts and operators').waitFor();
      await page.getByLabel('Management key', { exact: true }).fill(account.managementKey);
      await keyForm.getByRole('button', { name: 'Sign in with key' }).click();
      await page.getByRole('heading', { name: 'Forms', exact: true }).waitFor();
    } finally {
      await browser.close();
      await stack.close();
    }
  });
});

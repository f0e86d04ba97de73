import http from 'node:http';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { eventually, factories, listen } from '@intake/shared/testing';
import { launchChromium, screenshotDir, seriousViolations } from './browser';
import { startStack } from './stack';
import { gradientPng } from './png';
import { expectReflowed, keySignIn } from './owner';

/**
 * The web console in real Chromium over the real stack (the four services, their workers, Postgres,
 * NATS and Redis): a form owner's whole day, driven by role and label like a person.
 */
jest.setTimeout(60_000);

const HOSTILE_VALUE = '<img src=x onerror="window.__pwned=1">';
const HOSTILE_SCRIPT = '<script>window.__pwned=2</script>';
const HOSTILE_FIELD = '<b onmouseover=window.__pwned=3>who</b>'; // browsers escape " in multipart names
const PNG = gradientPng();
const EVIL_HTML = '<!doctype html><script>window.parent.__pwned=4;alert(4)</script><p>evil</p>';
const EVIL_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(5)</script><rect width="10" height="10"/></svg>';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface ConsoleContext {
  stack: Awaited<ReturnType<typeof startStack>>;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  account: { id: string; managementKey: string };
  site: Awaited<ReturnType<typeof listen>>;
  receiver: Awaited<ReturnType<typeof listen>>;
  received: Received[];
  dialogs: string[];
  consoleErrors: string[];
  /** Set by the test that creates the form; the later ones use it. */
  formId: string;
  ingestUrl: string;
  /** Where the owner's page posts its form. */
  ingestTarget: string;
}

/** The owner's website: another origin on loopback, with the form posting to Intake. */
function startOwnerSite(c: ConsoleContext) {
  return listen((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><html lang="en"><title>Acme contact</title>
<form action="${c.ingestTarget}" method="POST" enctype="multipart/form-data">
  <label>Email <input name="email" value="ada@example.com"></label>
  <label>Message <textarea name="message"></textarea></label>
  <label>Who <input name='${HOSTILE_FIELD.replace(/'/g, '&#39;')}' value="someone"></label>
  <label>Photo <input type="file" name="photo"></label>
  <label>Page <input type="file" name="page"></label>
  <label>Drawing <input type="file" name="drawing"></label>
  <input type="text" name="_gotcha" tabindex="-1" autocomplete="off" style="display:none">
  <button type="submit">Send</button>
</form></html>`);
  });
}

/** A webhook receiver that records each request and answers "thanks". */
function startReceiver(received: Received[]) {
  return listen((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.end('thanks');
    });
  });
}

/** For the whole file: the stack, Chromium with one page, the owner's account, site and webhook receiver. */
function useConsole(): ConsoleContext {
  const c = {
    received: [],
    dialogs: [],
    consoleErrors: [],
    formId: '',
    ingestUrl: '',
    ingestTarget: '',
  } as unknown as ConsoleContext;

  beforeAll(async () => {
    [c.stack, c.browser] = await Promise.all([startStack(), launchChromium()]);
    c.account = await factories.account(c.stack.platform.db, { plan: 'pro', name: 'Acme' });
    c.site = await startOwnerSite(c);
    c.receiver = await startReceiver(c.received);
    c.context = await c.browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    await c.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: c.stack.url });
    c.page = await c.context.newPage();
    c.page.on('console', (m) => {
      if (m.type() === 'error') c.consoleErrors.push(m.text());
    });
    c.page.on('dialog', (d) => {
      c.dialogs.push(d.message());
      void d.dismiss();
    });
  });

  afterAll(async () => {
    await c.browser?.close();
    await c.site?.close();
    await c.receiver?.close();
    await c.stack?.close();
  });

  return c;
}

/** What the tests check on any page: accessibility, screenshots, injected script, and the main navigation. */
function pageChecks(c: ConsoleContext) {
  const shots = screenshotDir();
  return {
    async expectAccessible(what: string) {
      expect({ what, violations: await seriousViolations(c.page) }).toEqual({ what, violations: [] });
    },
    async shot(name: string, options: { width?: number; dark?: boolean } = {}) {
      if (!shots) return;
      await c.page.setViewportSize({ width: options.width ?? 1280, height: 900 });
      await c.page.emulateMedia({ colorScheme: options.dark ? 'dark' : 'light' });
      await c.page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
      await c.page.setViewportSize({ width: 1280, height: 900 });
      await c.page.emulateMedia({ colorScheme: 'light' });
    },
    pwned: () => c.page.evaluate(() => (globalThis as { __pwned?: number }).__pwned ?? null),
    nav: (name: string) => c.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }),
  };
}
type PageChecks = ReturnType<typeof pageChecks>;

/** /console's headers, and signing in with a key. */
function servingAndSignInCases(c: ConsoleContext, { expectAccessible, shot, nav }: PageChecks) {
  it('serves /console with a strict CSP and safety headers; / redirects there; hashed assets are cached long', async () => {
    const { stack } = c;
    const res = await fetch(`${stack.url}/`, { redirect: 'manual' });
    expect([res.status, res.headers.get('location')]).toEqual([302, '/console']);
    const page_ = await fetch(`${stack.url}/console`);
    const csp = page_.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(page_.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page_.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page_.headers.get('cache-control')).toBe('no-cache');
    const html = await page_.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    const js = /src="(\/console\/assets\/main-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    const asset = await fetch(`${stack.url}${js}`);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${stack.url}/console/forms/frm_x/submissions`)).status).toBe(200); // deep links
    expect((await fetch(`${stack.url}/console/assets/nope.js`)).status).toBe(404);
  });

  it('signs in with a management key (a wrong one gets a readable message); the key is never kept in the page', async () => {
    const { stack, context, page, account } = c;
    await page.goto(`${stack.url}/`);
    await page.getByLabel('Management key', { exact: true }).fill('svc_mgmt_wrong');
    await keySignIn(page).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /not valid|revoked/ })
      .waitFor();
    await expectAccessible('sign-in');
    await shot('sign-in');
    await page.getByLabel('Management key', { exact: true }).fill(account.managementKey);
    await page.getByLabel('Management key', { exact: true }).press('Enter'); // the keyboard signs in too
    await page.getByRole('heading', { name: 'Forms', exact: true }).waitFor();
    // Focus moves to the new view; the next Tab reaches its first control, with a visible focus ring.
    await page.keyboard.press('Tab');
    expect(
      await page.evaluate(
        '[document.activeElement.textContent, getComputedStyle(document.activeElement).outlineStyle]',
      ),
    ).toEqual(['New form', 'solid']);
    for (const name of ['Forms', 'API keys', 'Usage']) await nav(name).waitFor();
    const cookie = (await context.cookies()).find((c) => c.name === 'intake_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    const visible = await page.evaluate<{ cookie: string }>(`({
      cookie: document.cookie,
      storage: JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
      html: document.documentElement.outerHTML,
    })`);
    expect(visible.cookie).not.toContain('intake_session');
    expect(JSON.stringify(visible)).not.toContain(account.managementKey);
    await page.getByText('No forms yet').waitFor(); // the empty state, with a snippet to start
    await expectAccessible('forms, empty');
  });
}

/** A visitor fills the owner's page (a hostile message and three files) and sends it; the redirect lands on /thanks. */
async function postFromTheOwnersPage(context: BrowserContext, siteUrl: string) {
  const visitor = await context.newPage();
  await visitor.goto(siteUrl);
  await visitor.getByLabel('Message').fill(`${HOSTILE_VALUE} and ${HOSTILE_SCRIPT}`);
  await visitor.getByLabel('Photo').setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: PNG });
  await visitor
    .getByLabel('Page')
    .setInputFiles({ name: 'evil.html', mimeType: 'text/html', buffer: Buffer.from(EVIL_HTML) });
  await visitor
    .getByLabel('Drawing')
    .setInputFiles({ name: 'evil.svg', mimeType: 'image/svg+xml', buffer: Buffer.from(EVIL_SVG) });
  await Promise.all([visitor.waitForURL(`${siteUrl}/thanks`), visitor.getByRole('button', { name: 'Send' }).click()]);
  await visitor.close();
}

/** Creating a form, and a post from the owner's own page showing in its inbox. */
function formCases(c: ConsoleContext, { expectAccessible, shot, pwned, nav }: PageChecks) {
  it('creates a form; its page shows the ingest URL and ready-to-paste snippets', async () => {
    const { stack, page, account } = c;
    await page.getByRole('link', { name: 'New form' }).click();
    await page.getByLabel('Name').fill('Contact');
    await page.getByLabel('Slug').fill(`contact-${Date.now().toString(36)}`);
    await page.getByLabel('Notify e-mails').fill('owner@example.com');
    await page.getByRole('button', { name: 'Create form' }).click();
    await page.getByRole('heading', { name: 'Snippets' }).waitFor();
    c.formId = /\/console\/forms\/(frm_[^/]+)$/.exec(page.url())?.[1] ?? '';
    expect(c.formId).toMatch(/^frm_/);
    const form = await stack.platform.db('forms').where({ id: c.formId }).first();
    expect(form).toMatchObject({ account_id: account.id, name: 'Contact', notify_emails: ['owner@example.com'] });
    c.ingestUrl = `${stack.url}/v1/f/${form.slug}`;
    await page.getByText(c.ingestUrl, { exact: true }).first().waitFor();
    for (const title of ['HTML form', 'fetch with JSON', 'fetch with a file'])
      await page.getByRole('heading', { name: title }).waitFor();
    expect(await page.getByLabel('HTML form').textContent()).toContain('name="_gotcha"');
    // Edit settings and save: a bot challenge (its secret stored sealed) and a redirect.
    await page.getByLabel('Provider', { exact: true }).selectOption('turnstile');
    await page.getByLabel('Provider secret key').fill('turnstile-secret-123');
    await page.getByLabel('Redirect URL').fill('https://example.com/thanks');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = await stack.platform.db('forms').where({ id: c.formId }).first();
    expect(saved).toMatchObject({ redirect_url: 'https://example.com/thanks', bot_challenge_provider: 'turnstile' });
    expect(saved.bot_challenge_secret).not.toContain('turnstile-secret-123');
    // Turned off again, so the page below can post without a challenge.
    await page.getByLabel('Provider', { exact: true }).selectOption('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await eventually(
      async () => (await stack.platform.db('forms').where({ id: c.formId }).first()).bot_challenge_provider === null,
    );
    await expectAccessible('form settings');
    await shot('form-settings');
  });

  it('shows a post from a real page on another origin, with files, in the inbox; hostile values stay text', async () => {
    const { stack, context, page, site, formId } = c;
    c.ingestTarget = c.ingestUrl;
    await stack.platform
      .db('forms')
      .where({ id: formId })
      .update({ redirect_url: `${site.url}/thanks` });
    await postFromTheOwnersPage(context, site.url);

    await nav('Forms').click();
    await page.getByRole('link', { name: 'Contact' }).click();
    await page.waitForURL(/\/submissions$/);
    const row = page.getByRole('row').filter({ hasText: 'ada@example.com' });
    await row.waitFor();
    expect(await row.textContent()).toContain(HOSTILE_VALUE);
    expect(await row.locator('td.num').textContent()).toBe('3');
    expect(await pwned()).toBeNull();
    await expectAccessible('inbox');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible('inbox, dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await shot('inbox');
    await shot('inbox-dark', { dark: true });
    await shot('inbox-mobile', { width: 375 });
    await shot('inbox-mobile-dark', { width: 375, dark: true });

    // Filters live in the URL.
    await page.getByLabel('Search').fill('nobody-wrote-this');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No submissions match these filters.').waitFor();
    expect(new URL(page.url()).searchParams.get('q')).toBe('nobody-wrote-this');
    await page.reload();
    await page.getByText('No submissions match these filters.').waitFor();
    await page.getByRole('link', { name: 'Clear' }).click();
    await row.waitFor();
  });
}

/** The inbox's exports: Excel first (its times in the console's zone), then CSV marked as UTF-8, then NDJSON. */
async function checkExports(page: ConsoleContext['page']) {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Export CSV' }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/-submissions\.csv$/);
  const csv = readFileSync((await download.path()) as string, 'utf8');
  // Marked as UTF-8 for Excel and LibreOffice.
  expect(csv.startsWith('\uFEFFid,')).toBe(true);
  expect(csv.split('\r\n')[0]).toContain('email');
  expect(csv).toContain('ada@example.com');
  // Excel comes first, its times in the console's zone.
  const exportsBar = page.locator('.toolbar').filter({ hasText: 'Export what the filters show' });
  await expect(exportsBar.getByRole('link').allTextContents()).resolves.toEqual([
    'Export Excel',
    'Export CSV',
    'Export NDJSON',
  ]);
  const [workbook] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Export Excel' }).click(),
  ]);
  expect(workbook.suggestedFilename()).toMatch(/-submissions\.xlsx$/);
  expect(new URL(workbook.url()).searchParams.get('tz')).toBeTruthy();
  // A workbook (its container is a zip; the HTTP tests open one in openpyxl).
  const xlsx = readFileSync((await workbook.path()) as string);
  expect(xlsx.subarray(0, 2).toString('latin1')).toBe('PK');
}

/** One submission: its page, its files, spam and back, the CSV export. */
function submissionCases(c: ConsoleContext, { expectAccessible, shot, pwned }: PageChecks) {
  it('opens the submission: fields as text in posted order, image preview, files downloaded as attachments', async () => {
    const { page, dialogs } = c;
    await page.getByRole('row').filter({ hasText: 'ada@example.com' }).getByRole('link').click();
    await page.getByRole('heading', { name: /Submission/ }).waitFor();
    const terms = await page.locator('dl.fields dt').allTextContents();
    expect(terms).toEqual(['email', 'message', HOSTILE_FIELD]);
    expect(await page.locator('dl.fields dd').nth(1).textContent()).toBe(`${HOSTILE_VALUE} and ${HOSTILE_SCRIPT}`);
    await page.getByRole('img', { name: 'Preview of photo.png' }).waitFor();
    expect(await page.getByRole('img', { name: /evil/ }).count()).toBe(0); // only raster images are previewed
    for (const [name, content] of [
      ['evil.html', EVIL_HTML],
      ['evil.svg', EVIL_SVG],
    ]) {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: `Download ${name}` }).click(),
      ]);
      expect(download.suggestedFilename()).toBe(name);
      expect(readFileSync((await download.path()) as string, 'utf8')).toBe(content);
    }
    expect(page.url()).toContain('/console/submissions/');
    await page.getByRole('button', { name: 'Copy as JSON' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    const copied = JSON.parse(await page.evaluate<string>('navigator.clipboard.readText()'));
    expect(copied.payload).toMatchObject({ email: 'ada@example.com', [HOSTILE_FIELD]: 'someone' });
    // Opening a file link directly: still an attachment with a sandboxing CSP, never rendered on our origin.
    const href = (await page.getByRole('link', { name: 'Download evil.html' }).getAttribute('href')) as string;
    const file = await fetch(href);
    expect(file.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(file.headers.get('content-security-policy')).toContain('sandbox');
    expect(await pwned()).toBeNull();
    expect(dialogs).toEqual([]);
    await expectAccessible('submission');
    await shot('submission');
    await shot('submission-mobile', { width: 375 });
  });

  it('marks the submission spam and back, and exports what the filters show', async () => {
    const { stack, page, formId } = c;
    await page.getByRole('button', { name: 'Mark as spam' }).click();
    await page.getByRole('button', { name: 'Mark as not spam' }).waitFor();
    await page
      .getByRole('heading', { name: /Submission/ })
      .getByText('spam')
      .waitFor();
    await page.getByRole('button', { name: 'Mark as not spam' }).click();
    await page.getByRole('button', { name: 'Mark as spam' }).waitFor();
    await page.getByRole('link', { name: 'Submissions' }).first().click();
    await page.getByRole('row').filter({ hasText: 'ada@example.com' }).waitFor();
    await checkExports(page);

    // Bulk: select every row, mark spam, then not spam.
    await page.getByLabel('Select all on this page').check();
    await page.getByRole('button', { name: 'Mark selected as spam' }).click();
    await page.getByRole('status').filter({ hasText: 'Marked as spam: 1 submission.' }).waitFor();
    expect((await stack.platform.db('submissions').where({ form_id: formId }).first()).status).toBe('spam');
    await page.getByRole('link', { name: 'Spam', exact: true }).click();
    await page.getByRole('row').filter({ hasText: 'ada@example.com' }).waitFor();
    await page.getByLabel('Select all on this page').check();
    await page.getByRole('button', { name: 'Mark selected as not spam' }).click();
    await page.getByRole('status').filter({ hasText: 'Marked as not spam: 1 submission.' }).waitFor();
  });
}

/** A webhook to a local receiver: ping, signed curl, rotation, a delivery and its replay. */
function webhookCases(c: ConsoleContext, { expectAccessible, shot }: PageChecks) {
  it('adds a webhook to a local receiver, pings it, copies a signed curl, sees a delivery and replays it', async () => {
    const { stack, page, receiver, received, formId, ingestUrl } = c;
    await page.getByRole('link', { name: 'Webhooks' }).first().click();
    await page.getByLabel('Webhook URL').fill(`${receiver.url}/hook`);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const secret = await page.getByLabel(/Signing secret of/).textContent();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Send test ping' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Test ping: succeeded · status 200 · \d+ ms/ })
      .waitFor();
    expect(received.some((r) => r.headers['x-service-event'] === 'webhook.test')).toBe(true);
    await page.getByRole('button', { name: 'Copy as curl' }).click();
    const curl = (await page.getByLabel('curl command').textContent()) ?? '';
    expect(curl).toContain(`curl -X POST '${receiver.url}/hook'`);
    expect(curl).toContain('x-service-signature: sha256=');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = await page.getByLabel(/New signing secret of/).textContent();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByText('disabled', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByText('enabled', { exact: true }).waitFor();
    expect((await stack.platform.db('webhooks').where({ form_id: formId }).first()).enabled).toBe(true);
    await expectAccessible('webhooks');
    await shot('webhooks');
    await shot('webhooks-mobile', { width: 375 });

    // A real submission is delivered and shows in the log; replay it.
    const post = await fetch(ingestUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ email: 'grace@example.com', message: 'Hello' }),
    });
    expect(post.status).toBe(201);
    const { id: submissionId } = (await post.json()) as { id: string };
    await eventually(() => received.some((r) => r.body.includes(submissionId)), { timeoutMs: 15_000 });
    await page.getByRole('link', { name: 'Delivery log' }).click();
    const delivery = page.locator('details.delivery').filter({ hasText: 'submission.created' });
    await eventually(
      async () => {
        if (await delivery.filter({ hasText: 'succeeded' }).count()) return true;
        await page.getByRole('button', { name: 'Refresh' }).click();
        return false;
      },
      { timeoutMs: 15_000, intervalMs: 300 },
    );
    await delivery.locator('summary').click();
    await delivery.getByRole('cell', { name: '200', exact: true }).waitFor();
    // The receiver is on loopback: the log keeps no answer body from a private address (the SSRF guard's rule).
    expect(await delivery.getByText('thanks', { exact: true }).count()).toBe(0);
    await page.getByLabel('Show').selectOption('failed');
    await page.getByText('No failed deliveries.').waitFor();
    await page.getByLabel('Show').selectOption('all');
    await delivery.locator('summary').click();
    const before = received.filter((r) => r.body.includes(submissionId)).length;
    await delivery.getByRole('button', { name: 'Replay' }).click();
    await page.getByRole('status').filter({ hasText: 'Replay queued' }).waitFor();
    await eventually(() => received.filter((r) => r.body.includes(submissionId)).length === before + 1, {
      timeoutMs: 15_000,
    });
    await expectAccessible('delivery log');
    await shot('delivery-log');
  });
}

/** Submission and management keys: shown once, revoked after confirming. */
function keyCases(c: ConsoleContext, { expectAccessible, shot, nav }: PageChecks) {
  it('mints a key (shown once) and revokes it after confirming', async () => {
    const { page, ingestUrl } = c;
    await nav('API keys').click();
    await page.getByLabel('Name').fill('website');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByLabel(/New submission key/).textContent()) ?? '';
    expect(key).toMatch(/^svc_sub_/);
    const row = page.getByRole('row').filter({ hasText: 'website' });
    await row.getByRole('button', { name: /Revoke/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await eventually(async () => !(await row.getByRole('button', { name: /Revoke/ }).count()));
    const res = await fetch(ingestUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(403);
    await expectAccessible('api keys');
    await shot('api-keys');
  });

  it('revoking the key of the console’s own session ends it: the console asks to sign in again', async () => {
    const { page, account } = c;
    await page.getByLabel('Type').selectOption('management');
    // A management key starts as a viewer: admin is a choice.
    expect(await page.getByLabel('Role').inputValue()).toBe('viewer');
    await page.getByLabel('Role').selectOption('admin');
    await page.getByLabel('Name').fill('laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    const laptopKey = (await page.getByLabel(/New management key/).textContent()) ?? '';
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Management key', { exact: true }).fill(laptopKey);
    await keySignIn(page).click();
    await nav('API keys').click();
    const row = page.getByRole('row').filter({ hasText: 'laptop' });
    await row.getByText('(this session)').waitFor();
    await row.getByRole('button', { name: /Revoke/ }).click();
    await page.getByRole('dialog').getByText('this console session ends with it').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('Your session has ended. Sign in again to continue.').waitFor();
    await page.getByLabel('Management key', { exact: true }).fill(laptopKey);
    await keySignIn(page).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /revoked/ })
      .waitFor();
    await page.getByLabel('Management key', { exact: true }).fill(account.managementKey);
    await keySignIn(page).click();
    await nav('Usage').waitFor();
  });
}

/** The usage page and its warnings. */
function usageCases(c: ConsoleContext, { expectAccessible, shot, nav }: PageChecks) {
  it('shows usage: figures, the per-day chart, the per-form table, and the warning at the limit', async () => {
    const { stack, page, account, formId, ingestUrl } = c;
    for (const email of ['a@example.com', 'b@example.com']) {
      const res = await fetch(ingestUrl, {
        method: 'POST',
        headers: { accept: 'application/json' },
        body: new URLSearchParams({ email }),
      });
      expect(res.status).toBe(201);
    }
    // The per-form and per-day figures are counted from the submission events, a moment later.
    await eventually(async () => {
      const usage = await (await page.request.get(`${stack.url}/v1/usage`)).json();
      return usage.forms.some((f: { form_id: string; received: number }) => f.form_id === formId && f.received >= 4);
    });
    await nav('Usage').click();
    await page.getByRole('img', { name: /Submissions per day this month/ }).waitFor();
    await page.getByRole('meter', { name: 'Share of the monthly limit used' }).waitFor();
    await page.getByRole('region', { name: 'Usage per form' }).getByText('Contact').waitFor();
    await expectAccessible('usage');
    await shot('usage');
    // The operator lowers the quota to what is used: the page warns that the limit is reached.
    const used = Number((await (await page.request.get(`${stack.url}/v1/usage`)).json()).used);
    expect(used).toBeGreaterThanOrEqual(4);
    await stack.platform.db('accounts').where({ id: account.id }).update({ quota_override: used });
    await page.reload();
    await page.getByRole('alert').filter({ hasText: 'Monthly limit reached.' }).waitFor();
    await stack.platform
      .db('accounts')
      .where({ id: account.id })
      .update({ quota_override: Math.floor(used / 0.8) });
    await page.reload();
    await page
      .getByRole('alert')
      .filter({ hasText: /\d+ % of this month’s submissions used/ })
      .waitFor();
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible('usage with its warning, dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await expectAccessible('usage with its warning');
    await shot('usage-warning');
    await shot('usage-dark', { dark: true });
    await shot('usage-mobile', { width: 375 });
  });
}

/** The forms list, a large inbox, deleting a form, and signing out. */
function formListCases(c: ConsoleContext, { expectAccessible, shot, pwned, nav }: PageChecks) {
  it('pauses and resumes a form from the list; shows a problem’s title and detail for a missing form', async () => {
    const { stack, page, formId } = c;
    await nav('Forms').click();
    await page.getByRole('button', { name: 'Pause Contact' }).click();
    await page.getByRole('button', { name: 'Resume Contact' }).waitFor();
    expect((await stack.platform.db('forms').where({ id: formId }).first()).status).toBe('paused');
    await page.getByRole('button', { name: 'Resume Contact' }).click();
    await page.getByRole('button', { name: 'Pause Contact' }).waitFor();
    expect((await stack.platform.db('forms').where({ id: formId }).first()).status).toBe('live');
    await expectAccessible('forms');
    await expectReflowed(page, 'Forms');
    await shot('forms');
    await page.goto(`${stack.url}/console/forms/frm_nope/submissions`);
    await page.getByRole('heading', { name: 'Form not found' }).waitFor();
    await page.getByRole('link', { name: 'Back to your forms' }).waitFor();
  });

  it('opens the inbox of a form with 10,000 submissions (time printed), then deletes that form after confirming', async () => {
    const { stack, page, account } = c;
    const big = await factories.form(stack.platform.db, account.id, { slug: `big-${Date.now().toString(36)}` });
    await stack.platform.db.raw(
      `INSERT INTO submissions (id, account_id, form_id, status, payload, received_at)
       SELECT 'sub_' || ? || lpad(n::text, 16, '0'), ?, ?, 'received',
              json_build_object('email', 'user' || n || '@example.com', 'message', 'Message number ' || n),
              now() - (n || ' seconds')::interval
       FROM generate_series(1, 10000) AS n`,
      [big.id.slice(4, 14), account.id, big.id],
    );
    const started = performance.now();
    await page.goto(`${stack.url}/console/forms/${big.id}/submissions`);
    await page.getByRole('row').filter({ hasText: 'user1@example.com' }).first().waitFor();
    const ms = Math.round(performance.now() - started);
    console.log(`console inbox of a form with 10,000 submissions: first page shown ${ms} ms after navigation`);
    expect(await page.locator('table.inbox tbody tr').count()).toBe(25);
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.getByRole('row').filter({ hasText: 'user26@example.com' }).waitFor();
    await page.getByRole('link', { name: 'Settings and snippets' }).click();
    await page.getByRole('button', { name: 'Delete form' }).click();
    // The dialog names the form and how many submissions go with it; they go to the trash, then for good from there.
    const dialog = page.getByRole('dialog');
    await dialog.getByText(/^Delete “.+” and its 10,000 submissions\?$/).waitFor();
    await dialog.getByRole('button', { name: 'Move to the trash' }).click();
    await page.getByRole('heading', { name: 'Forms', exact: true }).waitFor();
    expect(await stack.platform.db('forms').where({ id: big.id }).first('deleted_at')).toEqual({
      deleted_at: expect.any(Date),
    });
    await page.getByRole('link', { name: 'Trash' }).click();
    const trash = page.getByRole('region', { name: 'Forms in the trash' });
    await trash
      .getByRole('button', { name: /^Delete for good/ })
      .first()
      .waitFor();
    const name = (await stack.platform.db('forms').where({ id: big.id }).first('name')).name as string;
    await trash.getByRole('button', { name: `Delete for good ${name}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('status').filter({ hasText: 'deleted for good' }).waitFor();
    expect(await stack.platform.db('forms').where({ id: big.id }).first()).toBeUndefined();
    const left = await stack.platform.db('submissions').where({ form_id: big.id }).count('* as n').first();
    expect(Number(left?.n)).toBe(0);
  });

  it('signs out: the session ends on the server', async () => {
    const { stack, context, page, dialogs, consoleErrors } = c;
    const cookie = (await context.cookies()).find((c) => c.name === 'intake_session')?.value;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Management key', { exact: true }).waitFor();
    await page.getByText('You have signed out.').waitFor();
    const res = await fetch(`${stack.url}/v1/forms`, { headers: { cookie: `intake_session=${cookie}` } });
    expect(res.status).toBe(401);
    expect(await pwned()).toBeNull();
    expect(dialogs).toEqual([]);
    // Nothing the console itself does is refused by its own CSP (a hostile value would show here too).
    expect(consoleErrors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  });
}

describe('web console', () => {
  const c = useConsole();
  const checks = pageChecks(c);

  describe('serving and signing in', () => servingAndSignInCases(c, checks));
  describe('a form and its inbox', () => formCases(c, checks));
  describe('a submission', () => submissionCases(c, checks));
  describe('webhooks', () => webhookCases(c, checks));
  describe('API keys', () => keyCases(c, checks));
  describe('usage', () => usageCases(c, checks));
  describe('forms list and signing out', () => formListCases(c, checks));
});

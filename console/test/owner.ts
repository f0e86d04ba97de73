import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { eventually, factories, type ConfigOverrides } from '@intake/shared/testing';
import { launchChromium, screenshotDir, seriousViolations } from './browser';
import { startStack } from './stack';

/** The widths every view is checked at: a laptop and a phone. */
export const WIDTHS = [1280, 390] as const;

export interface OwnerConsole {
  stack: Awaited<ReturnType<typeof startStack>>;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  account: { id: string; managementKey: string };
  consoleErrors: string[];
}

/**
 * For a whole file: the stack (its configuration changed by `overrides`, read when it starts), Chromium (in New York's
 * time zone, so the browser's zone is not UTC) with one page, and an owner's account, signed in.
 */
export function useOwnerConsole(overrides: () => ConfigOverrides = () => ({})): OwnerConsole {
  const c = { consoleErrors: [] } as unknown as OwnerConsole;
  beforeAll(async () => {
    [c.stack, c.browser] = await Promise.all([startStack(overrides()), launchChromium()]);
    c.account = await factories.account(c.stack.platform.db, { plan: 'pro', name: 'Acme' });
    c.context = await c.browser.newContext({
      viewport: { width: 1280, height: 900 },
      timezoneId: 'America/New_York',
      acceptDownloads: true,
    });
    await c.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: c.stack.url });
    c.page = await c.context.newPage();
    c.page.on('pageerror', (e) => c.consoleErrors.push(`${e.message}\n${e.stack ?? ''}`));
    c.page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') c.consoleErrors.push(m.text());
    });
    await c.page.goto(`${c.stack.url}/console`);
    await c.page.getByLabel('Management key', { exact: true }).fill(c.account.managementKey);
    await c.page.getByLabel('Management key', { exact: true }).press('Enter');
    await c.page.getByRole('heading', { name: 'Forms', exact: true }).waitFor();
  });
  afterAll(async () => {
    await c.browser?.close();
    await c.stack?.close();
  });
  return c;
}

/** The management API as the owner's key calls it: the answer's JSON (to set up, and to check what the console saved). */
export const ownerApi =
  (c: OwnerConsole) =>
  async <T = { id: string } & Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${c.stack.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${c.account.managementKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as T;
  };

/** How far the page is wider than its viewport (0 when nothing pans sideways). */
export const overflow = (page: Page) =>
  page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

/**
 * A table that reflows at 390 px (Forms, Members, API keys, Privacy): nothing in it scrolls sideways, and each of its
 * controls lies whole within the viewport, where a person can see and press it.
 */
export async function expectReflowed(page: Page, label: string) {
  await page.setViewportSize({ width: 390, height: 900 });
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
  const region = page.getByRole('region', { name: label, exact: true });
  const hidden = await region.evaluate((el) => el.scrollWidth - el.clientWidth);
  const outside = await region.locator('button, select, a, input').evaluateAll((els) =>
    els
      .map((e) => ({
        name: (e.textContent || e.getAttribute('aria-label') || '').trim(),
        box: e.getBoundingClientRect(),
      }))
      .filter(({ box }) => box.left < 0 || box.right > 390)
      .map(({ name }) => name),
  );
  expect({ label, hidden, outside }).toEqual({ label, hidden: 0, outside: [] });
  await page.setViewportSize({ width: 1280, height: 900 });
}

/**
 * What every view must pass at both widths: no serious or critical axe violation, nothing wider than the viewport,
 * and a document title of its own. With CONSOLE_SCREENSHOTS set, a screenshot at each width.
 */
/**
 * The management key's button: "Sign in" until anyone has joined an account here, "Sign in with key" from then on
 * (the worker's database holds whatever the tests before made).
 */
export const keySignIn = (page: Page) =>
  page.getByRole('form', { name: 'Sign in with a management key' }).getByRole('button');

export async function checkView(page: Page, name: string, title: RegExp) {
  const shots = screenshotDir();
  // The title is set by the view once it has rendered, a moment after its heading may show on a busy machine.
  await eventually(async () => title.test(await page.title()), { timeoutMs: 5000 }).catch(() => undefined);
  expect({ name, title: await page.title() }).toEqual({ name, title: expect.stringMatching(title) });
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    // Layout settles in the next frame after a resize.
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    expect({ name, width, overflow: await overflow(page) }).toEqual({ name, width, overflow: 0 });
    expect({ name, width, violations: await seriousViolations(page) }).toEqual({ name, width, violations: [] });
    if (shots) await page.screenshot({ path: path.join(shots, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

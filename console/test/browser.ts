import { readFileSync } from 'node:fs';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium, driven by playwright-core: no browser download, nothing fetched from elsewhere. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  });
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, so the page's CSP, which
 * forbids inline script, stays as it is) and returns the serious and critical violations.
 */
export async function seriousViolations(page: Page): Promise<{ id: string; impact: string; targets: string[] }[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const g = globalThis as unknown as {
      axe: { run(ctx: unknown, o: object): Promise<{ violations: unknown[] }> };
      document: unknown;
    };
    const result = await g.axe.run(g.document, { resultTypes: ['violations'] });
    return result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[];
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }));
}

/** Where screenshots go: `CONSOLE_SCREENSHOTS=docs/console` writes them into the docs; unset, nowhere. */
export function screenshotDir(): string | undefined {
  const dir = process.env['CONSOLE_SCREENSHOTS'];
  if (!dir) return undefined;
  const abs = path.resolve(__dirname, '../..', dir);
  mkdirSync(abs, { recursive: true });
  return abs;
}

import type { Browser } from 'playwright-core';
import { buildServiceApp } from '@intake/shared/runtime';
import { createTestPlatform, factories, listen, useStarted } from '@intake/shared/testing';
import { createIngestService } from '@intake/ingest';
import { launchChromium } from '../console/test/browser';

/** Ingest, and a site on another origin whose page has a plain HTML form posting to a form of `slug`. */
function useIngestAndSite() {
  return useStarted(async () => {
    const platform = await createTestPlatform();
    const ingest = await listen(
      buildServiceApp(createIngestService({ publishAfterCommit: false }), platform).callback(),
    );
    const account = await factories.account(platform.db);
    const paused = await factories.form(platform.db, account.id, { status: 'paused' });
    const site = await listen((req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(
        `<!doctype html><title>Contact</title><form action="${ingest.url}/v1/f/${paused.slug}" method="POST">` +
          '<label>Message <input name="message" value="Hello"></label><button>Send</button></form>',
      );
    });
    const browser: Browser = await launchChromium();
    return {
      browser,
      siteUrl: `${site.url}/contact`,
      async close() {
        await browser.close();
        await Promise.all([site.close(), ingest.close()]);
        await platform.close();
      },
    };
  });
}

describe('a refused form post in a real browser', () => {
  const ctx = useIngestAndSite();

  it('shows the visitor a readable page with the reason and a link back to the form, not JSON', async () => {
    const page = await ctx.browser.newPage();
    try {
      await page.goto(ctx.siteUrl);
      const [answer] = await Promise.all([
        page.waitForNavigation(),
        page.getByRole('button', { name: 'Send' }).click(),
      ]);
      expect(answer?.status()).toBe(403);
      expect(await answer?.headerValue('content-type')).toBe('text/html; charset=utf-8');
      await expect(page.getByRole('heading', { name: 'Your submission was not sent' }).isVisible()).resolves.toBe(true);
      expect(await page.textContent('body')).toContain('does not accept submissions');
      // Back to the form itself, with what the visitor typed.
      await page.getByRole('link', { name: 'Go back' }).click();
      await page.waitForURL(ctx.siteUrl, { timeout: 10_000 });
      expect(await page.getByRole('textbox', { name: 'Message' }).inputValue()).toBe('Hello');
    } finally {
      await page.close();
    }
  });
});

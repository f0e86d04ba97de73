import path from 'node:path';
import type { Page } from 'playwright-core';
import { newId } from '@intake/shared/contracts';
import { eventually, factories } from '@intake/shared/testing';
import { screenshotDir, seriousViolations } from './browser';
import { useOwnerConsole, type OwnerConsole } from './owner';

/** A form's autoresponse, a submission's, and a webhook's health, format and replay, in real Chromium. */
jest.setTimeout(60_000);

const c: OwnerConsole = useOwnerConsole();

const shot = async (page: Page, name: string) => {
  const dir = screenshotDir();
  if (dir) await page.screenshot({ path: path.join(dir, name), fullPage: true });
};

describe('console: autoresponse', () => {
  it('saves a form’s autoresponse, and shows to whom a submission’s was sent', async () => {
    const { page, stack, account } = c;
    const form = await factories.form(stack.platform.db, account.id);
    await page.goto(`${stack.url}/console/forms/${form.id}`);
    const section = page.getByRole('form', { name: 'Autoresponse' });
    await section.getByLabel('Send an autoresponse').check();
    await section.getByLabel('Subject').fill('Thanks, {{name}}');
    await section.getByLabel('Reply-To address').fill('help@shop.example');
    await section.getByRole('button', { name: 'Save autoresponse' }).click();
    await section.getByText('Saved.').waitFor();
    const stored = await stack.platform.db('forms').where({ id: form.id }).first('autoresponse');
    expect(stored.autoresponse).toMatchObject({
      enabled: true,
      subject: 'Thanks, {{name}}',
      reply_to: 'help@shop.example',
    });
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'autoresponse-settings.png');

    const sub = await factories.submission(stack.platform, { accountId: account.id, formId: form.id, status: 'spam' });
    await stack.platform.db('notifications').insert({
      id: newId('notification'),
      account_id: account.id,
      kind: 'autoresponse',
      dedup_key: `autoresponse:${sub.id}`,
      recipients: JSON.stringify(['ada@example.test']),
      status: 'sent',
      attempt_count: 1,
      sent_at: new Date(),
    });
    await page.goto(`${stack.url}/console/submissions/${sub.id}`);
    await page.getByText(/Autoresponse sent to ada@example\.test at /).waitFor();
  });
});

describe('console: notification e-mail', () => {
  it('saves the sender name, the owner’s subject and text and a daily digest, and says a refused name at its field', async () => {
    const { page, stack, account } = c;
    const form = await factories.form(stack.platform.db, account.id);
    await page.goto(`${stack.url}/console/forms/${form.id}`);
    const section = page.getByRole('form', { name: 'Notification e-mail' });
    await section.getByLabel('Sender', { exact: true }).fill('Acme "Support"');
    await section.getByRole('button', { name: 'Save notification e-mail' }).click();
    await section.getByText('It has characters that are not allowed here.').waitFor();
    await section.getByLabel('Sender', { exact: true }).fill('Acme Support');
    await section.getByLabel('How often').selectOption({ label: 'One digest a day' });
    await section.getByLabel('Subject', { exact: true }).fill('New lead: {{name}}');
    await section.getByLabel('Text', { exact: true }).fill('{{name}} wrote:\n\n{{message}}');
    await section.getByRole('button', { name: 'Save notification e-mail' }).click();
    await section.getByText('Saved.').waitFor();
    const stored = await stack.platform
      .db('forms')
      .where({ id: form.id })
      .first('mail_from_name', 'notification_template', 'notification_schedule', 'digest_through');
    expect(stored).toEqual({
      mail_from_name: 'Acme Support',
      notification_template: { subject: 'New lead: {{name}}', text: '{{name}} wrote:\n\n{{message}}' },
      notification_schedule: 'daily',
      digest_through: expect.any(Date),
    });
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      expect({ width, violations: await seriousViolations(page) }).toEqual({ width, violations: [] });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await section.screenshot({ path: path.join(screenshotDir() ?? '/tmp', 'mail-settings.png') });
  });
});

describe('console: pages for visitors', () => {
  it('saves the thank-you and not-sent pages’ words, and leaves out what is empty', async () => {
    const { page, stack, account } = c;
    const form = await factories.form(stack.platform.db, account.id);
    await page.goto(`${stack.url}/console/forms/${form.id}`);
    const section = page.getByRole('form', { name: 'Pages for visitors' });
    await section.getByLabel('Thank-you title').fill('Merci!');
    await section.getByLabel('Thank-you message').fill('We answer within a day.');
    await section.getByLabel('Not-sent message').fill('Write to help@shop.example instead.');
    await section.getByRole('button', { name: 'Save pages' }).click();
    await section.getByText('Saved.').waitFor();
    expect(await stack.platform.db('forms').where({ id: form.id }).first('pages')).toEqual({
      pages: {
        thank_you: { title: 'Merci!', message: 'We answer within a day.' },
        refused: { message: 'Write to help@shop.example instead.' },
      },
    });
    expect(await seriousViolations(page)).toEqual([]);
    const dir = screenshotDir();
    if (dir) await section.screenshot({ path: path.join(dir, 'visitor-pages.png') });
  });
});

describe('console: webhook health, format and replay', () => {
  it('shows a failing webhook, changes its format, and replays its failed deliveries since a time', async () => {
    const { page, stack, account } = c;
    const form = await factories.form(stack.platform.db, account.id);
    const { db } = stack.platform;
    const hook = await factories.webhook(stack.platform, {
      accountId: account.id,
      formId: form.id,
      url: 'https://hooks.example.invalid/x',
    });
    const failingSince = new Date(Date.now() - 3 * 3_600_000);
    await db('webhooks')
      .where({ id: hook.id })
      .update({ failing_since: failingSince, last_failure_at: new Date(), consecutive_failures: 7 });
    for (const status of ['failed', 'failed', 'succeeded'] as const) {
      const s = await factories.submission(stack.platform, { accountId: account.id, formId: form.id, status: 'spam' });
      await factories.delivery(db, {
        accountId: account.id,
        webhookId: hook.id,
        formId: form.id,
        submissionId: s.id,
        status,
      });
    }
    await page.goto(`${stack.url}/console/forms/${form.id}/webhooks`);
    await page.getByText('Last 24 h: 1 succeeded · 2 failed · 0 pending.').waitFor();
    await page.getByText(/7 failed attempts in a row/).waitFor();

    await page.getByLabel('Posts').selectOption('slack');
    await eventually(async () => (await db('webhooks').where({ id: hook.id }).first('format')).format === 'slack');
    // A Slack URL is the channel's credential: from now on the console shows its host only.
    await page.getByRole('heading', { name: 'https://hooks.example.invalid/…', exact: true }).waitFor();

    await page.getByLabel('Replay failed since…').fill('2000-01-01T00:00');
    await page.getByRole('button', { name: 'Count failed deliveries' }).click();
    await page.getByRole('button', { name: 'Replay 2 failed deliveries' }).click();
    await page.getByText('2 failed deliveries of https://hooks.example.invalid/… queued for a replay.').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'webhook-health.png');
  });
});

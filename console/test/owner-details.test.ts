import type http from 'node:http';
import { eventually, listen, managementKeyWithRole } from '@intake/shared/testing';
import { checkView, ownerApi, useOwnerConsole } from './owner';

/**
 * Details of an owner's day from the agency review (issue 66), in Chromium over the real stack: a Slack, Discord or
 * Teams webhook added as such (no signing secret, no `x-service-*` headers).
 */
jest.setTimeout(180_000);

const c = useOwnerConsole();

/** The management API as the owner's key calls it (to set up, and to check what the console saved). */
const call = ownerApi(c);

describe('a chat webhook', () => {
  const received: http.IncomingHttpHeaders[] = [];
  let channel: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    channel = await listen((req, res) => {
      received.push(req.headers);
      req.resume();
      req.on('end', () => res.end('ok'));
    });
  });
  afterAll(() => channel.close());

  it('is added as Slack: no signing secret shown or rotated, and its messages carry no x-service-* header', async () => {
    const { page, stack } = c;
    const form = await call('POST', '/v1/forms', { name: 'Emergency callback' });
    await page.goto(`${stack.url}/console/forms/${form.id}/webhooks`);
    const add = page.getByRole('form', { name: 'Add a webhook' });
    // A Slack address chooses Slack; the kind is the owner's once chosen.
    await add.getByLabel('Webhook URL').fill('https://hooks.slack.com/services/T000/B000/XXXX');
    expect(await add.getByLabel('Sends to').inputValue()).toBe('slack');
    await add.getByText('not signed, so no secret').waitFor();
    await add.getByLabel('Sends to').selectOption('slack');
    await add.getByLabel('Slack webhook URL').fill(`${channel.url}/services/T000/B000/XXXX`);
    await add.getByRole('button', { name: 'Add webhook' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Slack webhook added: each submission is posted to the channel as a message.' })
      .waitFor();
    expect(await page.getByLabel(/Signing secret of/).count()).toBe(0);
    expect(await page.getByText('x-service-signature').count()).toBe(0);
    const card = page.locator('li.card');
    expect(await card.getByLabel('Posts').inputValue()).toBe('slack');
    expect(await card.getByRole('button', { name: 'Rotate secret' }).count()).toBe(0);
    await card.getByRole('button', { name: 'Send test ping' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Test ping: succeeded/ })
      .waitFor();
    await eventually(() => received.length === 1);
    expect(Object.keys(received[0]!).filter((h) => /^(x-service-|webhook-)/.test(h))).toEqual([]);
    await checkView(page, 'webhook-slack', /^Webhooks · Emergency callback · .*Intake console$/);

    // Made a signed webhook, it shows the secret it now has, once.
    await card.getByLabel('Posts').selectOption('standard');
    await page.getByLabel(/New signing secret of/).waitFor();
    expect(await page.getByLabel(/New signing secret of/).textContent()).toMatch(/^whsec_/);
    await card.getByRole('button', { name: 'Rotate secret' }).waitFor();
  });
});

describe('the rate limit', () => {
  it('is shown on the form’s settings with the posts it refused, and set within the plan’s most', async () => {
    const { page, stack } = c;
    const form = await call<{ id: string; slug: string }>('POST', '/v1/forms', { name: 'Contact', rate_limit: 2 });
    const answers = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${stack.url}/v1/f/${form.slug}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ email: `n${i}@example.com` }),
      });
      answers.push(res.status);
    }
    expect(answers).toEqual([201, 201, 429, 429, 429]);
    // Ingest writes its refusals within a second.
    await eventually(
      async () =>
        (await call<{ refused: { today: number } }>('GET', `/v1/forms/${form.id}/rate-limit`)).refused.today === 3,
    );
    await page.goto(`${stack.url}/console/forms/${form.id}`);
    const section = page.getByRole('region', { name: 'Rate limit' });
    await section.getByText('At most 2 posts in 10 minutes from one address;').waitFor();
    await section
      .getByText(/^Posts refused: 3 today · 3 in the last 7 days · 3 in the last 30 days \(the last on /)
      .waitFor();
    const posts = section.getByLabel('Posts from one address per 10 minutes');
    expect(await posts.inputValue()).toBe('2');
    await section.getByText('Empty takes the default (60); at most 600 on the Pro plan.').waitFor();
    await posts.fill('601');
    await section.getByRole('button', { name: 'Save rate limit' }).click();
    await section.getByText('must be at most 600 on the Pro plan').waitFor();
    await posts.fill('');
    await section.getByRole('button', { name: 'Save rate limit' }).click();
    await section.getByRole('status').filter({ hasText: 'Rate limit saved.' }).waitFor();
    await section.getByText('At most 60 posts in 10 minutes from one address (this Intake’s default);').waitFor();
    expect((await call<{ rate_limit: number | null }>('GET', `/v1/forms/${form.id}`)).rate_limit).toBeNull();
    await section.scrollIntoViewIfNeeded();
    await checkView(page, 'form-rate-limit', /^Settings · Contact · .*Intake console$/);
  });
});

describe('the dashboard at 390 px', () => {
  it('lists 25 clients in compact rows, shorter than ten screens, with dates in one format', async () => {
    const { page, stack } = c;
    const made = await Promise.all(
      Array.from({ length: 25 }, (_, i) => call('POST', '/v1/projects', { name: `Client ${i + 1} Dental & Co` })),
    );
    await Promise.all(made.map((p) => call('POST', '/v1/forms', { name: 'Contact', project_id: p.id })));
    await page.goto(`${stack.url}/console/dashboard`);
    const projects = page.getByRole('region', { name: 'Projects at a glance' });
    await projects.getByRole('link', { name: 'Client 25 Dental & Co' }).waitFor();
    // The Default project got the rate-limit test's posts: its last day, written as every date is.
    await eventually(
      async () => {
        const cells = await projects.getByRole('row').filter({ hasText: 'Default' }).getByRole('cell').allInnerTexts();
        if (cells.some((t) => /[A-Z][a-z]{2} \d{1,2}, \d{4} \(UTC\)/.test(t))) return true;
        await page.reload();
        return false;
      },
      { timeoutMs: 15_000, intervalMs: 500 },
    );
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    const height = await page.evaluate<number>('document.documentElement.scrollHeight');
    console.log(
      `dashboard at 390 px with ${made.length + 1} projects: ${height} px (${(height / 844).toFixed(1)} screens)`,
    );
    expect(height).toBeLessThan(10 * 844);
    await checkView(page, 'dashboard-25-clients', /^Dashboard · Intake console$/);
  });
});

describe('settings per client, what was left', () => {
  let client: { id: string };
  let form: { id: string };
  beforeAll(async () => {
    client = await call('POST', '/v1/projects', { name: 'Hale Dental' });
    form = await call('POST', '/v1/forms', { name: 'Booking', project_id: client.id, retention_days: 90 });
  });

  it('a project’s form defaults keep submissions forever, and its forms take that', async () => {
    const { page, stack } = c;
    await page.goto(`${stack.url}/console/projects/${client.id}`);
    const defaults = page.getByRole('form', { name: 'Form defaults' });
    await defaults.getByLabel('Keep submissions until they are deleted').check();
    await defaults.getByLabel('Notify e-mails').fill('leads@agency.example');
    await defaults.getByRole('button', { name: 'Save form defaults' }).click();
    await defaults.getByRole('status').filter({ hasText: 'Form defaults saved.' }).waitFor();
    const saved = await call<{ form_defaults: Record<string, unknown> }>('GET', `/v1/projects/${client.id}`);
    expect(saved.form_defaults).toEqual({ retention_days: null, notify_emails: ['leads@agency.example'] });
    expect(await defaults.getByLabel('Keep submissions until they are deleted').isChecked()).toBe(true);
    // The form had set its own 90 days: it keeps them; a new form of the client keeps its submissions.
    expect((await call<{ retention_days: number | null }>('GET', `/v1/forms/${form.id}`)).retention_days).toBe(90);
    const fresh = await call<{ retention_days: number | null; inherited: string[] }>('POST', '/v1/forms', {
      name: 'Recall',
      project_id: client.id,
    });
    expect(fresh.retention_days).toBeNull();
    expect(fresh.inherited).toEqual(expect.arrayContaining(['retention_days', 'notify_emails']));
  });

  it('a viewer’s read-only settings mark what comes from the client', async () => {
    const { browser, stack } = c;
    const viewerKey = await managementKeyWithRole(stack.platform.db, c.account.id, 'viewer');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await page.goto(`${stack.url}/console`);
      await page.getByLabel('Management key', { exact: true }).fill(viewerKey);
      await page.getByLabel('Management key', { exact: true }).press('Enter');
      await page.getByRole('heading', { name: 'Forms', exact: true }).waitFor();
      await page.goto(`${stack.url}/console/forms/${form.id}`);
      const e = page.getByRole('definition').filter({ hasText: 'leads@agency.example' });
      await e.getByText('· From Hale Dental').waitFor();
      // Its own 90 days are not marked.
      const kept = page.getByRole('definition').filter({ hasText: '90 days' });
      expect(await kept.getByText('From Hale Dental').count()).toBe(0);
      await checkView(page, 'viewer-settings-from-client', /^Settings · Booking · .*Intake console$/);
    } finally {
      await context.close();
    }
  });

  it('asks before signing out with edits not saved', async () => {
    const { page, stack } = c;
    await page.goto(`${stack.url}/console/forms/${form.id}`);
    await page.getByLabel('Redirect URL').fill('https://hale.example/thanks');
    await page.getByText('Changes not saved yet.').first().waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    const ask = page.getByRole('dialog', { name: 'Sign out without saving?' });
    await ask.getByText('Not saved: Settings.').waitFor();
    await ask.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.getByLabel('Redirect URL').inputValue()).toBe('https://hale.example/thanks');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await ask.getByRole('button', { name: 'Sign out without saving' }).click();
    await page.getByLabel('Management key', { exact: true }).waitFor();
  });
});

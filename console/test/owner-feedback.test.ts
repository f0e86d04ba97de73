import http from 'node:http';
import { eventually, factories, listen } from '@intake/shared/testing';
import { checkView, overflow, useOwnerConsole, type OwnerConsole } from './owner';

/**
 * The console's everyday paths, in Chromium over the real stack: settings that stay true after Save, validation in
 * plain words at the field, webhook tools that say what they do and follow retries live, titled views, a not-found
 * view, and pages that fit a phone.
 */
jest.setTimeout(120_000);

const LONG_NAME = `Customer feedback from the spring campaign landing page ${'and more '.repeat(12)}`.trim();
const LONG_SLUG = `spring-campaign-feedback-${'x'.repeat(39)}`; // 64 characters, the longest a slug may be

function settingsCases(c: OwnerConsole) {
  it('creates a form (said so), then after Save shows the new name, status, ingest URL and snippets; warns before a slug change', async () => {
    const { page, stack } = c;
    await page.getByRole('link', { name: 'New form' }).click();
    await checkView(page, 'new-form', /^New form · Intake console$/);
    await page.getByLabel('Name', { exact: true }).fill('Contact');
    await page.getByLabel('Slug').fill(`contact-${Date.now().toString(36)}`);
    await page.getByRole('button', { name: 'Create form' }).click();
    await page.getByRole('status').filter({ hasText: 'Form “Contact” created.' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill(LONG_NAME);
    await page.getByLabel('Status').selectOption('paused');
    await page.getByLabel('Slug').fill(LONG_SLUG);
    await page.getByText(/websites that post to \/v1\/f\/contact-\w+ will get “not found”/).waitFor();
    await page.getByRole('button', { name: 'Save changes' }).click();
    const dialog = page.getByRole('dialog', { name: 'Change the ingest URL?' });
    await dialog.getByRole('button', { name: 'Change slug' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const heading = page.getByRole('heading', { level: 1 });
    await eventually(async () => (await heading.textContent()) === `${LONG_NAME} paused`);
    const url = `${stack.url}/v1/f/${LONG_SLUG}`;
    await page.getByText(url, { exact: true }).waitFor();
    expect(await page.getByLabel('HTML form').textContent()).toContain(`action="${url}"`);
    expect(await page.getByLabel('fetch with JSON').textContent()).toContain(`'${url}'`);
    await checkView(page, 'form-settings', new RegExp(`^Settings · ${LONG_NAME} · Intake console$`));
  });

  it('checks the slug pattern in the browser, says server refusals in plain words once at the field', async () => {
    const { page } = c;
    const slug = page.getByLabel('Slug');
    await slug.fill('Not A Slug');
    expect(
      await slug.evaluate(
        (el) => (el as unknown as { validity: { patternMismatch: boolean } }).validity.patternMismatch,
      ),
    ).toBe(true);
    await slug.fill(LONG_SLUG);
    expect(await slug.evaluate((el) => (el as unknown as { validity: { valid: boolean } }).validity.valid)).toBe(true);
    await page.getByLabel('Notify e-mails').fill('owner@example.com\nnot-an-address');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const message = 'Notify e-mails: Line 2 is not an e-mail address.';
    await page.getByText(message).waitFor();
    expect(await page.getByText(message).count()).toBe(1);
    expect(await page.getByText('must match format').count()).toBe(0);
    expect(await page.getByLabel('Notify e-mails').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Notify e-mails').getAttribute('aria-describedby')).toContain('f-emails-error');
    await page.getByLabel('Notify e-mails').fill('owner@example.com');
    await page.getByLabel('Provider', { exact: true }).selectOption('hcaptcha');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page
      .getByText('Provider secret key: Line')
      .or(page.getByText(/Provider secret key: .*secret key/))
      .waitFor();
    expect(await page.getByText('Something went wrong').count()).toBe(0);
    await page.getByLabel('Provider', { exact: true }).selectOption('');
    // The address typed was not saved: leaving the settings asks first.
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page
      .getByRole('dialog', { name: 'Leave without saving?' })
      .getByRole('button', { name: 'Leave without saving' })
      .click();
  });
}

/** A receiver that answers 500 `failures` times, then 200; and one path that never answers (until closed). */
async function startReceiver() {
  const hanging: http.ServerResponse[] = [];
  let failures = 3;
  const server = await listen((req, res) => {
    if (req.url === '/hang') return void hanging.push(res);
    req.resume();
    req.on('end', () => {
      if (req.url === '/flaky' && failures-- > 0) res.writeHead(500).end('not yet');
      else res.end('thanks');
    });
  });
  return {
    ...server,
    async close() {
      for (const res of hanging) res.destroy();
      await server.close();
    },
  };
}

function webhookCases(c: OwnerConsole, receiver: () => Awaited<ReturnType<typeof startReceiver>>) {
  it('states this deployment’s retry schedule; edits a URL; shows progress while a ping waits; confirms create and delete', async () => {
    const { page } = c;
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    // The stack runs with WEBHOOK_RETRY_SCHEDULE=200ms,200ms,200ms,200ms and WEBHOOK_TIMEOUT_MS=3000.
    await page.getByText('retried after 200 ms, 200 ms, 200 ms, 200 ms (4 retries)').waitFor();
    await page.getByText('A receiver has 3 s to answer.').waitFor();
    await page.getByLabel('Webhook URL').fill(`${receiver().url}/hang`);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByRole('status').filter({ hasText: 'Webhook added.' }).waitFor();
    await page.getByRole('button', { name: 'Send test ping' }).click();
    await page.getByRole('status').filter({ hasText: 'waiting for the receiver to answer' }).waitFor();
    await page.getByRole('progressbar', { name: 'Test ping under way' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Test ping: failed' }).waitFor({ timeout: 15_000 });
    expect(await page.getByRole('progressbar').count()).toBe(0);
    await page.getByRole('button', { name: 'Edit URL' }).click();
    await page.getByLabel('New URL').fill(`${receiver().url}/flaky`);
    await page.getByRole('button', { name: 'Save URL' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Webhook URL changed to ${receiver().url}/flaky.` })
      .waitFor();
    await page.getByRole('heading', { name: `${receiver().url}/flaky` }).waitFor();
    await checkView(page, 'webhooks', /^Webhooks · .* · Intake console$/);
  });

  it('follows a delivery’s retries live, names its webhook on the submission, and numbers a replay as a replay', async () => {
    const { page, stack } = c;
    const form = await stack.platform.db('forms').where({ account_id: c.account.id }).first();
    await page.getByRole('link', { name: 'Delivery log' }).click();
    await page.getByRole('heading', { name: /^Delivery log/ }).waitFor();
    const post = await fetch(`${stack.url}/v1/f/${form.slug}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com' }),
    });
    expect(post.status).toBe(201);
    // Paused forms refuse posts; this one was resumed below, so the post is stored and delivered.
    const delivery = page.locator('details.delivery').filter({ hasText: 'submission.created' });
    // No Refresh click: the log updates itself while the retries run, until the fourth attempt succeeds.
    await delivery.filter({ hasText: 'succeeded' }).waitFor({ timeout: 20_000 });
    await delivery.locator('summary').click();
    await delivery.getByRole('cell', { name: '#4', exact: true }).waitFor();
    await delivery.getByRole('button', { name: 'Replay' }).click();
    await delivery.getByRole('cell', { name: 'Replay 1', exact: true }).waitFor({ timeout: 15_000 });
    expect(await delivery.getByRole('cell', { name: '#5', exact: true }).count()).toBe(0);
    await checkView(page, 'delivery-log', /^Delivery log · .* · Intake console$/);
    await delivery.getByRole('link', { name: 'Open the submission' }).click();
    const onSubmission = page.locator('details.delivery').first();
    await onSubmission.getByText(`to ${receiver().url}/flaky`).waitFor();
    await onSubmission.locator('summary').click();
    await checkView(page, 'submission-deliveries', /^Submission of /);
  });
}

function trashCases(c: OwnerConsole) {
  it('deletes a webhook and a form, saying so each time', async () => {
    const { page, stack } = c;
    const form = await stack.platform.db('forms').where({ account_id: c.account.id }).first();
    await page.goto(`${stack.url}/console/forms/${form.id}/webhooks`);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete webhook' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Webhook .* deleted\.$/ })
      .waitFor();
    await page.getByRole('link', { name: 'Settings and snippets' }).click();
    await page.getByRole('button', { name: 'Delete form' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Move to the trash' }).click();
    await page
      .getByRole('status')
      .filter({
        hasText: /^Form “.*” moved to the trash with its \d+ submissions?\. It can be restored from Forms → Trash\.$/,
      })
      .waitFor();
    await checkView(page, 'forms', /^Forms · Intake console$/);
    await page.getByRole('link', { name: 'Trash' }).click();
    const trash = page.getByRole('region', { name: 'Forms in the trash' });
    await trash.getByRole('button', { name: /^Restore/ }).waitFor();
    await checkView(page, 'trash', /^Trash · Intake console$/);
    await trash.getByRole('button', { name: /^Restore/ }).click();
    await page.getByRole('status').filter({ hasText: 'restored with its submissions' }).waitFor();
    expect(await stack.platform.db('forms').where({ id: form.id }).first('deleted_at')).toEqual({ deleted_at: null });
  });
}

function frameCases(c: OwnerConsole) {
  it('copies a submission as JSON with its files', async () => {
    const { page, stack } = c;
    const form = await stack.platform.db('forms').where({ account_id: c.account.id }).first();
    const sub = await factories.submission(stack.platform, {
      accountId: c.account.id,
      formId: form.id,
      payload: { email: 'grace@example.com' },
      files: [{ field: 'cv', filename: 'cv.pdf', contentType: 'application/pdf', size: 12 }],
    });
    await page.goto(`${stack.url}/console/submissions/${sub.id}`);
    await page.getByRole('button', { name: 'Copy as JSON' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    const copied = JSON.parse(await page.evaluate<string>('navigator.clipboard.readText()'));
    expect(copied.payload).toEqual({ email: 'grace@example.com' });
    expect(copied.files).toEqual([
      expect.objectContaining({ field: 'cv', filename: 'cv.pdf', content_type: 'application/pdf', size: 12 }),
    ]);
  });

  it('answers an unknown address or a missing form with a titled not-found view and a way back', async () => {
    const { page, stack } = c;
    for (const [path, heading] of [
      ['/console/nowhere', 'Page not found'],
      ['/console/forms/frm_01aaaaaaaaaaaaaaaaaaaaaaaa/submissions', 'Form not found'],
      ['/console/submissions/sub_01aaaaaaaaaaaaaaaaaaaaaaaa', 'Submission not found'],
    ]) {
      await page.goto(`${stack.url}${path}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await checkView(page, `not-found`, new RegExp(`^${heading} · Intake console$`));
    }
    await page.getByRole('link', { name: 'Back to your forms' }).click();
    await page.getByRole('heading', { name: 'Forms', exact: true }).waitFor();
  });

  it('gives API keys and Usage their own titles and fits them in 390 px', async () => {
    const { page } = c;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await checkView(page, 'api-keys', /^API keys · Intake console$/);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage', exact: true }).waitFor();
    await checkView(page, 'usage', /^Usage · Intake console$/);
  });

  it('says once why a key does not sign in', async () => {
    const { page } = c;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Management key', { exact: true }).fill('svc_mgmt_wrong');
    await page.getByLabel('Management key', { exact: true }).press('Enter');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.count()).toBe(1);
    // One sentence, said once (not a title and a detail that repeat it).
    const text = (await alert.textContent()) ?? '';
    expect(text).toMatch(/not valid or has been revoked/);
    expect(text.match(/not valid/g)).toHaveLength(1);
    await checkView(page, 'sign-in', /^Sign in · Intake console$/);
    expect(await overflow(page)).toBe(0);
    expect(c.consoleErrors.filter((e) => !/401|Failed to load resource/.test(e))).toEqual([]);
  });
}

describe('the owner’s everyday paths', () => {
  const c = useOwnerConsole();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver?.close());

  describe('form settings', () => settingsCases(c));
  describe('webhooks', () => {
    beforeAll(async () => {
      // Posts need a live form.
      await c.stack.platform.db('forms').where({ account_id: c.account.id }).update({ status: 'live' });
    });
    webhookCases(c, () => receiver);
  });
  describe('deleting, the trash and restoring', () => trashCases(c));
  describe('frames, confirmations and titles', () => frameCases(c));
});

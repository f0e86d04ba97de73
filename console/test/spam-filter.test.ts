import { factories } from '@intake/shared/testing';
import { checkView, useOwnerConsole, type OwnerConsole } from './owner';

/**
 * The spam filter in the console, in Chromium over the real stack: a form's filter mode and rules saved from its
 * settings, and a submission's page saying its score and, in words, why it is spam or what would have caught it.
 */
jest.setTimeout(120_000);

const c: OwnerConsole = useOwnerConsole();

/** A new form: its filter on, with the rules a new form starts with (DEFAULT_SPAM_RULES). */
async function formOf(owner: OwnerConsole) {
  return factories.form(owner.stack.platform.db, owner.account.id);
}

/** Sets a submission's spam score and reasons as the filter records them. */
const scoreSubmission = (owner: OwnerConsole, id: string, score: number, reasons: string[]) =>
  owner.stack.platform
    .db('submissions')
    .where({ id })
    .update({ spam_score: score, spam_reasons: JSON.stringify(reasons) });

/** A submission caught for its blocked domain that the classifier scored 0.97 as well. */
async function caughtSubmission(owner: OwnerConsole, formId: string) {
  const caught = await factories.submission(owner.stack.platform, {
    accountId: owner.account.id,
    formId,
    status: 'spam',
    spamReason: 'blocked-domain:mailinator.com',
    payload: { email: 'bot@mailinator.com', message: 'Cheap pills' },
  });
  await scoreSubmission(owner, caught.id, 0.97, ['blocked-domain:mailinator.com', 'classifier:0.97']);
  return caught;
}

it('saves the filter mode and rules from the form’s settings, and shows them after Save', async () => {
  const { page, stack } = c;
  const form = await formOf(c);
  await page.goto(`${stack.url}/console/forms/${form.id}`);
  const spam = page.getByRole('form', { name: 'Spam filter' });
  await spam.getByLabel('Mode').selectOption('on');
  await spam.getByLabel('Blocked e-mail domains').fill('mailinator.com\nspam.example');
  await spam.getByLabel('Blocked words or phrases').fill('cheap pills');
  await spam.getByLabel('Most links allowed').fill('2');
  await spam.getByLabel('The same fields posted again are spam').check();
  // A new form's defaults are on; the owner loosens one.
  expect(await spam.getByLabel('Block disposable e-mail addresses').isChecked()).toBe(true);
  await spam.getByLabel(/Known spam is spam/).uncheck();
  await spam.getByLabel('Within (hours)').fill('6');
  await spam.getByRole('button', { name: 'Save spam filter' }).click();
  await spam.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const row = await stack.platform.db('forms').where({ id: form.id }).first('spam_filter', 'spam_rules');
  expect(row).toEqual({
    spam_filter: 'on',
    spam_rules: {
      block_disposable: true,
      links_in_name: true,
      starting_model: true,
      blocked_domains: ['mailinator.com', 'spam.example'],
      blocked_words: ['cheap pills'],
      max_links: 2,
      reject_duplicates: true,
      duplicate_window_hours: 6,
    },
  });
  await page.reload();
  expect(await page.getByRole('form', { name: 'Spam filter' }).getByLabel('Mode').inputValue()).toBe('on');
  await checkView(page, 'form-spam-settings', /· Intake console$/);
});

it('shows a caught submission’s score and reasons in words, and a shadow one’s as what would have caught it', async () => {
  const { page, stack } = c;
  const form = await formOf(c);
  const caught = await caughtSubmission(c, form.id);
  await page.goto(`${stack.url}/console/submissions/${caught.id}`);
  await page
    .getByText('Spam score 0.97 · caught by: blocked domain mailinator.com; the classifier (0.97)', { exact: true })
    .waitFor();
  await checkView(page, 'submission-spam-reasons', /· Intake console$/);

  const shadow = await factories.submission(stack.platform, {
    accountId: c.account.id,
    formId: form.id,
    payload: { message: 'Hello' },
  });
  await scoreSubmission(c, shadow.id, 0.12, ['duplicate']);
  await page.goto(`${stack.url}/console/submissions/${shadow.id}`);
  await page
    .getByText('Spam score 0.12 · would have been caught by: the same fields were posted recently', { exact: true })
    .waitFor();
});

it('shows each caught post’s score and reasons in its row of the Spam view, the stranger’s text isolated', async () => {
  const { page, stack } = c;
  const form = await formOf(c);
  await caughtSubmission(c, form.id);
  await page.goto(`${stack.url}/console/forms/${form.id}/submissions?status=spam`);
  const cell = page.getByRole('cell', { name: /^Score 0\.97/ });
  await cell.waitFor();
  expect(await cell.textContent()).toBe('Score 0.97 · blocked domain mailinator.com; the classifier (0.97)');
  expect(await cell.locator('bdi').allTextContents()).toEqual([
    'blocked domain mailinator.com',
    'the classifier (0.97)',
  ]);
  await page.getByRole('columnheader', { name: 'Why spam' }).waitFor();
  await checkView(page, 'spam-view-reasons', /· Intake console$/);
});

it('shows on the Spam view how the classifier is doing: its examples, still learning, what shadow would have caught', async () => {
  const { page, stack } = c;
  const form = await formOf(c);
  const db = stack.platform.db;
  const post = (props: Partial<Parameters<typeof factories.submission>[1]> = {}) =>
    factories.submission(stack.platform, { accountId: c.account.id, formId: form.id, ...props });
  const mark = async (spam: boolean) => {
    const payload = { message: spam ? 'Cheap pills' : 'Hello there' };
    const s = await post({ payload });
    await db('spam_examples').insert({
      submission_id: s.id,
      account_id: c.account.id,
      is_spam: spam,
      payload: JSON.stringify(payload),
      marked_at: new Date(),
    });
  };
  await db('forms').where({ id: form.id }).update({ spam_filter: 'shadow' });
  for (let i = 0; i < 3; i++) await mark(true);
  for (let i = 0; i < 10; i++) await mark(false);
  for (let i = 0; i < 2; i++) await post({ status: 'spam', spamReason: 'honeypot' });
  const figure = (term: string) =>
    page
      .getByRole('region', { name: 'Spam classifier' })
      .locator('div', { has: page.getByText(term) })
      .locator('dd');
  await page.goto(`${stack.url}/console/forms/${form.id}/submissions?status=spam`);
  await page.getByTestId('spam-model-state').waitFor();
  expect(await figure('Marked spam').textContent()).toBe('3');
  expect(await figure('Honeypot catches').textContent()).toBe('2');
  expect(await figure('Marked not spam').textContent()).toBe('10');
  expect(await page.getByTestId('spam-model-state').textContent()).toMatch(
    /^Still learning: it needs 10 examples of each kind \(it has 5 spam and 10 not spam\)/,
  );
  const before = Number(await figure('Shadow would have caught').textContent());
  const shadow = await post({ payload: { email: 'bot@mailinator.com' } });
  await db('submissions')
    .where({ id: shadow.id })
    .update({ spam_reasons: JSON.stringify(['blocked-domain:mailinator.com']) });
  await page.reload();
  await page.getByTestId('spam-model-state').waitFor();
  expect(Number(await figure('Shadow would have caught').textContent())).toBe(before + 1);
  await checkView(page, 'spam-view-model', /· Intake console$/);
});

it('shows on the Spam view what the defaults kept out and where to loosen them; marking says whose filter it teaches', async () => {
  const { page, stack } = c;
  const db = stack.platform.db;
  const client = await factories.project(db, c.account.id, 'Hale Dental');
  const form = await factories.form(db, c.account.id, { project_id: client.id });
  const spam = (spamReason: string, email: string) =>
    factories.submission(stack.platform, {
      accountId: c.account.id,
      formId: form.id,
      status: 'spam',
      spamReason,
      payload: { name: 'x1x1', email, message: 'Earn $5000/week with bitcoin trading' },
    });
  await spam('disposable-domain:10minutemail.com', 'x1x1@10minutemail.com');
  await spam('disposable-domain:yopmail.com', 'seo.master@yopmail.com');
  const crypto = await spam('known-spam:crypto-profit', 'crypto@example.com');
  await spam('link-in-name:name', 'rich@example.com');
  await page.goto(`${stack.url}/console/forms/${form.id}/submissions?status=spam`);
  const kept = page.getByRole('region', { name: /^Kept out/ });
  const figure = (term: string) => kept.locator('div', { has: page.getByText(term, { exact: true }) }).locator('dd');
  await figure('Disposable addresses').waitFor();
  expect(await figure('Disposable addresses').textContent()).toBe('2');
  expect(await figure('Known spam').textContent()).toBe('1');
  expect(await figure('A link in a name').textContent()).toBe('1');
  expect(await page.getByTestId('spam-filter-state').textContent()).toBe(
    'This form’s filter is on: disposable addresses, a link in a name, known spam make a post spam. The starting ' +
      'classifier scores posts until your marks teach this one; it only records. Loosen or change the spam filter',
  );
  await page
    .getByRole('checkbox', { name: /Select submission/ })
    .first()
    .check();
  const teaches = 'Marking teaches only Hale Dental’s spam filter, no other client’s.';
  expect(await page.getByTestId('marks-teach').textContent()).toBe(teaches);
  await checkView(page, 'spam-view-defaults', /· Intake console$/);

  await page.goto(`${stack.url}/console/submissions/${crypto.id}`);
  await page.getByText('Spam score not scored · caught by: known spam: a crypto profit pitch').waitFor();
  expect(await page.getByTestId('marks-teach').textContent()).toBe(teaches);
  await checkView(page, 'submission-marks-teach', /· Intake console$/);

  await page.goto(`${stack.url}/console/forms/${form.id}/submissions?status=spam`);
  await page.getByRole('link', { name: 'Loosen or change the spam filter' }).click();
  const settings = page.getByRole('form', { name: 'Spam filter' });
  await settings.getByLabel('Block disposable e-mail addresses').uncheck();
  await settings.getByRole('button', { name: 'Save spam filter' }).click();
  await settings.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  expect((await db('forms').where({ id: form.id }).first('spam_rules')).spam_rules).toEqual({
    links_in_name: true,
    known_spam: true,
    starting_model: true,
  });
});

it('says on a caught post’s page, and on a rescued one’s, that files sent with spam are not kept', async () => {
  const { page, stack } = c;
  const form = await formOf(c);
  const post = (props: Partial<Parameters<typeof factories.submission>[1]> = {}) =>
    factories.submission(stack.platform, { accountId: c.account.id, formId: form.id, ...props });
  const note = page.getByTestId('files-not-kept');
  const caught = await post({ status: 'spam', spamReason: 'honeypot' });
  await stack.platform
    .db('submissions')
    .where({ id: caught.id })
    .update({ spam_reasons: JSON.stringify(['honeypot']) });
  await page.goto(`${stack.url}/console/submissions/${caught.id}`);
  await page.getByRole('heading', { name: 'Files', exact: true }).waitFor();
  expect(await note.textContent()).toBe('Files sent with a post marked spam are not kept.');

  await page.getByRole('button', { name: 'Mark as not spam' }).click();
  await page.getByRole('button', { name: 'Mark as spam' }).waitFor();
  await note.filter({ hasText: 'This post was caught as spam before it was rescued.' }).waitFor();
  expect(await note.textContent()).toBe(
    'This post was caught as spam before it was rescued. Files sent with a post marked spam are not kept.',
  );
  await checkView(page, 'submission-rescued-files', /· Intake console$/);

  const kept = await post({ files: [{ filename: 'cv.pdf', content: 'pdf', contentType: 'application/pdf' }] });
  await page.goto(`${stack.url}/console/submissions/${kept.id}`);
  await page.getByRole('link', { name: 'Download cv.pdf' }).waitFor();
  expect(await note.count()).toBe(0);
});

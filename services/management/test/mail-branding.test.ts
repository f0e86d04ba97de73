import PostalMime from 'postal-mime';
import { randomBytes } from 'node:crypto';
import { eventually, factories, useStarted } from '@intake/shared/testing';
import { sendDigests, DIGEST_LISTED } from '@intake/delivery';
import { ownerWithForm, startManagementWithMail } from './helpers';

/** The platform's clock is moved: a daily digest is due a day after the last. */
const ctx = useStarted(startManagementWithMail);
const DAY_MS = 86_400_000;

/** A form of a new account, set through the API with `settings`; `owner` is its one notification address. */
async function brandedForm(settings: Record<string, unknown>) {
  const owner = `owner-${randomBytes(4).toString('hex')}@shop.example`;
  const made = await ownerWithForm(ctx, { row: { notify_emails: [owner] }, settings });
  const submit = (payload: Record<string, string>, status: 'received' | 'spam' = 'received') =>
    made.submit({ payload, status });
  return { ...made, owner, submit };
}

describe('branded e-mail: the settings', () => {
  it('stores and shows the from-name, template and schedule; a name that could add a header or an address is 422', async () => {
    const { form, call, patched } = await brandedForm({
      mail_from_name: 'Acme Support',
      notification_template: { subject: 'Lead: {{name}}' },
      notification_schedule: 'daily',
    });
    expect(patched).toMatchObject({
      mail_from_name: 'Acme Support',
      notification_template: { subject: 'Lead: {{name}}' },
      notification_schedule: 'daily',
    });
    for (const bad of [
      { mail_from_name: 'Acme\r\nBcc: x@example.com' },
      { mail_from_name: 'Acme <evil@example.com>' },
      { mail_from_name: '' },
      { notification_template: { subject: 'two\nlines' } },
      { notification_template: { html: '<b>x</b>' } },
      { notification_schedule: 'weekly' },
    ]) {
      const res = await call('PATCH', `/v1/forms/${form.id}`, bad);
      expect({ bad, status: res.status, type: res.body.type }).toEqual({
        bad,
        status: 422,
        type: expect.stringMatching(/validation-failed$/),
      });
    }
    const reset = await call('PATCH', `/v1/forms/${form.id}`, { mail_from_name: null, notification_template: null });
    expect(reset.body).toMatchObject({ mail_from_name: null, notification_template: null });
  });

  it('refuses a from-name that a mail client would show as another address or reorder: encoded-words, bidi and C1 controls', async () => {
    const { form, call } = await brandedForm({ mail_from_name: 'Acme Support' });
    for (const name of [
      '=?utf-8?B?PGV2aWxAcHJvYmUudGVzdD4=?=', // decodes to <evil@probe.test>
      '=?UTF-8?q?evil=40probe.test?=',
      'Acme =?iso-8859-1?Q?=3Cx=40y.z=3E?= Support',
      'Acme \u202eetset.eborp@live',
      'Acme\u0085Support',
      'Acme\u2066Support',
    ]) {
      const res = await call('PATCH', `/v1/forms/${form.id}`, { mail_from_name: name });
      expect({ name, status: res.status, type: res.body.type, named: JSON.stringify(res.body) }).toEqual({
        name,
        status: 422,
        type: expect.stringMatching(/validation-failed$/),
        named: expect.stringContaining('mail_from_name'),
      });
    }
    for (const name of ['Acme Support', 'Café Müller', 'Q&A = help?', 'שלום']) {
      const res = await call('PATCH', `/v1/forms/${form.id}`, { mail_from_name: name });
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
    }
  });
});

describe('branded e-mail: the notification', () => {
  it('comes from the form’s name with the owner’s subject and text, and an HTML part with every value escaped', async () => {
    const { owner, submit } = await brandedForm({
      mail_from_name: 'Acme Support',
      notification_template: { subject: 'New lead: {{name}}', text: 'From {{name}} <{{email}}>:\n\n{{message}}' },
    });
    const stored = await submit({ name: 'Ada', email: 'ada@example.com', message: '<script>alert(1)</script>\nBye' });
    const [mail] = await eventually(() => ctx.mailsTo(owner).length === 1 && ctx.mailsTo(owner));
    const parsed = await PostalMime.parse(mail!.raw);
    expect(parsed.from).toEqual({ name: 'Acme Support', address: 'no-reply@intake.test' });
    expect(parsed.subject).toBe('New lead: Ada');
    // The owner's text is the whole message: nothing of Intake's above it, and (the address being no member's) no link.
    expect(parsed.text).toMatch(/^From Ada <ada@example.com>:\n\n<script>alert\(1\)<\/script>\nBye/);
    expect(parsed.text).not.toContain('message: ');
    expect(parsed.text).not.toContain(`/console/submissions/${stored.id}`);
    expect(parsed.html).toContain('&lt;script&gt;alert(1)&lt;&#x2F;script&gt;<br>Bye');
    expect(parsed.html).toContain('From Ada &lt;ada@example.com&gt;:');
    expect(parsed.html).not.toMatch(/<script/i);
    expect(parsed.html).not.toMatch(/<h1|console/);
  });

  it('without a template lists the fields as a table in the HTML part, and the post’s _subject still wins', async () => {
    const { owner, account, form } = await brandedForm({ mail_from_name: 'Shop' });
    await factories.submission(ctx.platform, {
      accountId: account.id,
      formId: form.id,
      payload: { name: 'Grace', note: 'a & b' },
      directions: { subject: 'Order #42' },
    });
    const [mail] = await eventually(() => ctx.mailsTo(owner).length === 1 && ctx.mailsTo(owner));
    const parsed = await PostalMime.parse(mail!.raw);
    expect([parsed.subject, parsed.from?.name]).toEqual(['Order #42', 'Shop']);
    expect(parsed.text).toContain('note: a & b');
    expect(parsed.html).toMatch(/<th[^>]*>note<\/th><td[^>]*>a &amp; b<\/td>/);
  });

  it('an autoresponse comes from the form’s name too', async () => {
    const { submit } = await brandedForm({
      mail_from_name: 'Acme Support',
      autoresponse: { enabled: true, subject: 'Thanks', text: 'We got it.' },
    });
    await submit({ email: 'grace@example.com' });
    const [mail] = await eventually(
      () => ctx.mailsTo('grace@example.com').length === 1 && ctx.mailsTo('grace@example.com'),
    );
    const parsed = await PostalMime.parse(mail!.raw);
    expect(parsed.from).toEqual({ name: 'Acme Support', address: 'no-reply@intake.test' });
    expect(parsed.html).toContain('We got it.');
  });
});

describe('branded e-mail: the daily digest', () => {
  afterEach(() => {
    ctx.clock.offsetMs = 0;
  });
  const digests = () => sendDigests({ ...ctx.platform, mailer: ctx.mailer, now: () => ctx.clock.now() });

  it('mails no submission on its own, then one digest a day of what was received, once', async () => {
    const daily = await brandedForm({ notification_schedule: 'daily', mail_from_name: 'Acme' });
    const each = await brandedForm({});
    for (let n = 1; n <= DIGEST_LISTED + 2; n++) await daily.submit({ name: `Visitor ${n}`, topic: 'pricing' });
    await daily.submit({ name: 'Bot' }, 'spam');
    // A form mailing each submission gets its mail; by then the daily form's would have been sent too.
    await each.submit({ name: 'Ada' });
    await eventually(() => ctx.mailsTo(each.owner).length === 1);
    expect(ctx.mailsTo(daily.owner)).toEqual([]);
    expect(await digests()).toBe(0); // not due yet

    ctx.clock.offsetMs = DAY_MS + 60_000;
    expect(await digests()).toBe(1);
    expect(await digests()).toBe(0);
    const [mail] = ctx.mailsTo(daily.owner);
    expect(ctx.mailsTo(daily.owner)).toHaveLength(1);
    const parsed = await PostalMime.parse(mail!.raw);
    expect(parsed.from?.name).toBe('Acme');
    expect(parsed.subject).toBe(`Daily digest: Test form (${DIGEST_LISTED + 2} new)`);
    expect(parsed.text).toContain(`Visitor ${DIGEST_LISTED + 2} · pricing`);
    expect(parsed.text).not.toContain('Visitor 1 ·');
    expect(parsed.text).toContain('and 2 more');
    expect(parsed.text).not.toContain('Bot');
    // The address is no member's: no link into a console it cannot open.
    expect(parsed.html).not.toContain('Open the inbox');
    expect(parsed.text).not.toContain('/console/');

    // The next day has nothing: no mail, its row says why.
    ctx.clock.offsetMs = 2 * DAY_MS + 120_000;
    expect(await digests()).toBe(0);
    expect(ctx.mailsTo(daily.owner)).toHaveLength(1);
    const rows = await ctx.platform
      .db('notifications')
      .where({ kind: 'digest', account_id: daily.account.id })
      .orderBy('created_at')
      .select('status', 'last_error');
    expect(rows).toEqual([
      { status: 'sent', last_error: null },
      { status: 'skipped', last_error: 'nothing was received in its window' },
    ]);
  });
});

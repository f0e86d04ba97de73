import PostalMime from 'postal-mime';
import { eventually, factories, useStarted } from '@intake/shared/testing';
import { api, ownerWithForm, startManagementWithMail } from './helpers';

/** The platform's clock is moved: the window between two autoresponses to one address is measured on it. */
const ctx = useStarted(startManagementWithMail);

const SETTINGS = {
  enabled: true,
  subject: 'Thanks, {{name}}: {{ message }}',
  text: 'Hello {{name}},\nwe got: <b>{{message}}</b>\n{{missing}}-',
  reply_to: 'help@shop.example',
};

/** An account whose form has an autoresponse set through the API. */
async function formWithAutoresponse(settings: Record<string, unknown> = SETTINGS) {
  const owner = await ownerWithForm(ctx, { settings: { autoresponse: settings } });
  const submit = (payload: Record<string, string>, status: 'received' | 'spam' = 'received') =>
    owner.submit({ payload, status });
  return { ...owner, submit };
}

const mailsTo = (address: string) =>
  ctx.smtp.mails.filter((m) => m.to.some((to) => to.toLowerCase() === address.toLowerCase()));
const autoresponses = (submissionIds: string[]) =>
  ctx.platform
    .db('notifications')
    .whereIn(
      'dedup_key',
      submissionIds.map((id) => `autoresponse:${id}`),
    )
    .select('status', 'last_error', 'recipients');

describe('autoresponse: the setting', () => {
  it('is stored and shown as written; a subject of two lines, a bad reply_to or an unknown key is 422', async () => {
    const { form, call } = await formWithAutoresponse();
    expect((await call('GET', `/v1/forms/${form.id}`)).body.autoresponse).toEqual(SETTINGS);
    for (const bad of [
      { ...SETTINGS, subject: 'Hi\r\nBcc: victim@example.com' },
      { ...SETTINGS, reply_to: 'not an address' },
      { ...SETTINGS, html: '<b>hi</b>' },
      { enabled: true, text: 'no subject' },
    ]) {
      const refused = await call('PATCH', `/v1/forms/${form.id}`, { autoresponse: bad });
      expect(refused.status).toBe(422);
    }
    expect((await call('PATCH', `/v1/forms/${form.id}`, { autoresponse: null })).body.autoresponse).toBeNull();
  });
});

describe('autoresponse: through SMTP', () => {
  it('mails the submitter once with the placeholders filled as plain text, and the submission shows it sent', async () => {
    const { account, call, submit } = await formWithAutoresponse();
    const stored = await submit({
      name: 'Ada',
      email: ' ada@example.com ',
      message: 'Hi\r\nBcc: victim@example.com',
    });
    const [mail] = await eventually(() => mailsTo('ada@example.com').length === 1 && mailsTo('ada@example.com'));
    expect(mail!.to).toEqual(['ada@example.com']);
    const parsed = await PostalMime.parse(mail!.raw);
    expect(parsed.subject).toBe('Thanks, Ada: Hi Bcc: victim@example.com');
    expect(parsed.headers.filter((h) => h.key === 'bcc')).toEqual([]);
    // The HTML part says the same, every value and the template's own markup escaped (the template is plain text).
    expect(parsed.html).toContain('we got: &lt;b&gt;Hi<br>Bcc: victim@example.com&lt;&#x2F;b&gt;');
    expect(parsed.text?.trimEnd()).toBe(
      'Hello Ada,\nwe got: <b>Hi\r\nBcc: victim@example.com</b>\n-'.replace(/\r/g, ''),
    );
    expect(parsed.replyTo?.[0]?.address).toBe('help@shop.example');
    expect(parsed.from?.address).toBe('no-reply@intake.test');
    const shown = await eventually(async () => {
      const got = await call('GET', `/v1/submissions/${stored.id}`);
      return got.body.autoresponse?.status === 'sent' && got.body.autoresponse;
    });
    expect(shown).toEqual({
      status: 'sent',
      to: 'ada@example.com',
      attempt_count: 1,
      last_error: null,
      sent_at: expect.any(String),
    });
    // Erasing Ada's data takes the mail's record and the limit's memory of her address with the submission.
    const sentTo = () =>
      ctx.platform.db('autoresponse_mailboxes').where({ account_id: account.id, mailbox: 'ada@example.com' });
    expect(await sentTo()).toHaveLength(1);
    expect((await call('DELETE', '/v1/data-subjects?email=ada@example.com')).body).toEqual({ deleted: 1 });
    expect(await sentTo()).toEqual([]);
    expect(await ctx.platform.db('notifications').where({ dedup_key: `autoresponse:${stored.id}` })).toEqual([]);
  });

  it('sends nothing for spam, and once for a spam submission its owner rescues', async () => {
    const { call, submit } = await formWithAutoresponse();
    const spam = await submit({ name: 'S', email: 'rescued@example.com', message: 'x' }, 'spam');
    await submit({ name: 'R', email: 'after-spam@example.com', message: 'x' });
    await eventually(() => mailsTo('after-spam@example.com').length === 1);
    expect(mailsTo('rescued@example.com')).toEqual([]);
    expect((await call('GET', `/v1/submissions/${spam.id}`)).body.autoresponse).toBeNull();

    expect((await call('PATCH', `/v1/submissions/${spam.id}`, { status: 'received' })).status).toBe(200);
    await eventually(() => mailsTo('rescued@example.com').length === 1);
    await call('PATCH', `/v1/submissions/${spam.id}`, { status: 'spam' });
    await call('PATCH', `/v1/submissions/${spam.id}`, { status: 'received' });
    await submit({ name: 'R', email: 'after-rescue@example.com', message: 'x' });
    await eventually(() => mailsTo('after-rescue@example.com').length === 1);
    expect(mailsTo('rescued@example.com')).toHaveLength(1);
  });
});

describe('autoresponse: never a mail cannon', () => {
  it('mails a flood of 50 posts naming one address once, records the rest skipped, and again after 10 minutes', async () => {
    const { submit } = await formWithAutoresponse();
    const ids: string[] = [];
    for (let i = 0; i < 50; i++)
      ids.push((await submit({ name: `Bot ${i}`, email: 'Victim@Example.com', message: 'x' })).id);
    const rows = await eventually(async () => {
      const found = await autoresponses(ids);
      return found.length === 50 && found.every((r) => r.status !== 'pending') && found;
    });
    expect(rows.filter((r) => r.status === 'sent')).toHaveLength(1);
    expect(rows.filter((r) => r.status === 'skipped').map((r) => r.last_error)).toEqual(
      Array(49).fill('an autoresponse of this account went to this mailbox less than 10 minutes ago'),
    );
    expect(mailsTo('Victim@Example.com')).toHaveLength(1);

    ctx.clock.offsetMs += 10 * 60_000 + 1000;
    await submit({ name: 'Later', email: 'victim@example.com', message: 'x' });
    await eventually(() => mailsTo('victim@example.com').length === 2);
  });

  it('counts mailboxes per account: case, +tags, Gmail’s dots and a second form do not multiply the mails', async () => {
    const { account, submit } = await formWithAutoresponse();
    const otherForm = await factories.form(ctx.platform.db, account.id);
    await api(ctx.url, account.managementKey)('PATCH', `/v1/forms/${otherForm.id}`, { autoresponse: SETTINGS });
    const spellings = [
      'Jane.Doe@gmail.com',
      'janedoe+news@gmail.com',
      'J.A.N.E.D.O.E@googlemail.com',
      'JANEDOE@GMAIL.COM',
    ];
    const ids: string[] = [];
    for (const email of spellings) ids.push((await submit({ name: 'J', email, message: 'x' })).id);
    const viaOther = await factories.submission(ctx.platform, {
      accountId: account.id,
      formId: otherForm.id,
      payload: { name: 'J', email: 'jane.doe+other@gmail.com' },
    });
    ids.push(viaOther.id);
    const rows = await eventually(async () => {
      const found = await autoresponses(ids);
      return found.length === ids.length && found.every((r) => r.status !== 'pending') && found;
    });
    expect(rows.filter((r) => r.status === 'sent')).toHaveLength(1);
    const mailed = ctx.smtp.mails.filter((m) => m.to.some((to) => /jane|j\.a\.n/i.test(to)));
    expect(mailed).toHaveLength(1);
  });

  it('never mails a value that is not one address, and reads the address from email_field when set', async () => {
    const { submit } = await formWithAutoresponse({ ...SETTINGS, email_field: 'Your address' });
    const bad = [
      await submit({ name: 'A', 'Your address': 'a@example.com, b@example.com', email: 'fallback@example.com' }),
      await submit({ name: 'B', 'Your address': 'Eve <eve@example.com>' }),
      await submit({ name: 'C', 'Your address': 'c@example.com\r\nBcc: d@example.com' }),
      await submit({ name: 'D', email: 'only-default@example.com' }),
    ];
    const good = await submit({ name: 'E', 'Your address': 'field@example.com' });
    await eventually(() => mailsTo('field@example.com').length === 1);
    const rows = await eventually(async () => {
      const found = await autoresponses(bad.map((s) => s.id));
      return found.length === 4 && found;
    });
    expect(rows.map((r) => [r.status, r.last_error, r.recipients])).toEqual(
      Array(4).fill(['skipped', 'no field of the submission holds one e-mail address', []]),
    );
    for (const address of ['a@', 'b@', 'eve@', 'c@', 'd@', 'fallback@', 'only-default@'])
      expect(ctx.smtp.mails.filter((m) => m.to.some((to) => to.startsWith(address)))).toEqual([]);
    expect(good.id).toMatch(/^sub_/);
  });
});

import PostalMime from 'postal-mime';
import { Webhook } from 'standardwebhooks';
import { createMailer, type Mailer } from '@intake/shared/base';
import { requestTestPing } from '@intake/shared/webhooks';
import { eventually, factories, smtpSink, useStarted, type SmtpSink } from '@intake/shared/testing';
import { sendDigests, sweepWebhookHealth } from '../src';
import { receiver, startDelivery } from './helpers';

/** A project name a page or a mail would run as markup if it were not escaped. */
const HOSTILE = '<img src=x onerror=alert(1)>';

/** Moves the platform's clock: a daily digest is due a day after the last. */
let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };
const DAY_MS = 86_400_000;

const ctx = useStarted(async () => {
  const smtp: SmtpSink = await smtpSink();
  const delivery = await startDelivery({ SMTP_URL: smtp.url, MAIL_FROM: 'Intake <no-reply@intake.test>' });
  const mailer: Mailer = createMailer(delivery.platform.config, delivery.platform.logger);
  return {
    ...delivery,
    smtp,
    mailer,
    async close() {
      mailer.close();
      await delivery.close();
      await smtp.close();
    },
  };
});

const mailsTo = (address: string) => ctx.smtp.mails.filter((m) => m.to.includes(address));
const oneMailTo = async (address: string) => {
  const [mail] = await eventually(() => mailsTo(address).length === 1 && mailsTo(address));
  return PostalMime.parse(mail!.raw);
};

/**
 * A form named "Contact" of a new account, in a project named `project` (left out: the account's default project),
 * with `settings` written to its row; `owner` is its one notification address.
 */
async function contactForm(project: string | undefined, settings: Record<string, unknown> = {}) {
  const { db } = ctx.platform;
  const account = await factories.account(db);
  const owner = `leads-${account.id.slice(-8).toLowerCase()}@agency.example`;
  const client = project === undefined ? undefined : await factories.project(db, account.id, project);
  const form = await factories.form(db, account.id, { notify_emails: [owner], project_id: client?.id });
  await db('forms')
    .where({ id: form.id })
    .update({ name: 'Contact', ...settings });
  const submit = (payload: Record<string, string>) =>
    factories.submission(ctx.platform, { accountId: account.id, formId: form.id, formName: 'Contact', payload });
  return { account, form, owner, client, submit };
}

describe('the client named in the notification', () => {
  it('names the project in the default subject, the sender and the body of the notification', async () => {
    const { owner, submit } = await contactForm('Acme Dental');
    await submit({ name: 'Ada', email: 'ada@example.com' });
    const mail = await oneMailTo(owner);
    expect(mail.subject).toBe('New submission: Contact — Acme Dental');
    expect(mail.from).toEqual({ name: 'Acme Dental', address: 'no-reply@intake.test' });
    expect(mail.text).toMatch(/^New submission to "Contact" — Acme Dental\n/);
    expect(mail.html).toContain('New submission to &quot;Contact&quot; — Acme Dental</h1>');
  });

  it('names a form in the account’s default project as before', async () => {
    const { owner, submit } = await contactForm(undefined);
    await submit({ name: 'Ada' });
    const mail = await oneMailTo(owner);
    expect(mail.subject).toBe('New submission: Contact');
    expect(mail.from).toEqual({ name: 'Intake', address: 'no-reply@intake.test' });
    expect(mail.text).toMatch(/^New submission to "Contact"\n/);
    expect(mail.text).not.toContain('Default');
  });

  it('keeps the owner’s subject and sender, and fills {{project}} and {{form}} in their template', async () => {
    const { owner, submit } = await contactForm('Acme Dental', {
      mail_from_name: 'Pixel & Pine leads',
      notification_template: JSON.stringify({
        subject: 'Lead for {{project}} ({{form}}): {{name}}',
        text: '{{name}} wrote to {{project}}.',
      }),
    });
    await submit({ name: 'Ada' });
    const mail = await oneMailTo(owner);
    expect(mail.subject).toBe('Lead for Acme Dental (Contact): Ada');
    expect(mail.from?.name).toBe('Pixel & Pine leads');
    expect(mail.text).toContain('Ada wrote to Acme Dental.');
  });

  it('lets a posted field named `project` fill {{project}}, as it did before the placeholder existed', async () => {
    const { owner, submit } = await contactForm('Acme Dental', {
      notification_template: JSON.stringify({ subject: 'About {{project}}' }),
    });
    await submit({ project: 'a new kitchen' });
    expect((await oneMailTo(owner)).subject).toBe('About a new kitchen');
  });

  it('shows a project named like markup as text in the HTML part, and sends from the default name', async () => {
    const { owner, submit } = await contactForm(HOSTILE);
    await submit({ name: 'Ada' });
    const mail = await oneMailTo(owner);
    expect(mail.subject).toBe(`New submission: Contact — ${HOSTILE}`);
    // Not a display name: it holds `<` and `>`, which a sender's name may not.
    expect(mail.from).toEqual({ name: 'Intake', address: 'no-reply@intake.test' });
    expect(mail.html).toContain('— &lt;img src&#x3D;x onerror&#x3D;alert(1)&gt;</h1>');
    expect(mail.html).not.toMatch(/<img/i);
  });
});

describe('the client named in the other mails of a form', () => {
  it('names the client in the autoresponse’s default subject and sender, and in its {{project}}', async () => {
    const visitor = `visitor-${Date.now()}@example.com`;
    const { submit } = await contactForm('Acme Dental', {
      autoresponse: JSON.stringify({
        enabled: true,
        subject: '{{subject}}',
        text: 'Thank you for writing to {{project}}.',
      }),
    });
    await submit({ email: visitor });
    const mail = await oneMailTo(visitor);
    expect(mail.subject).toBe('Contact — Acme Dental');
    expect(mail.from).toEqual({ name: 'Acme Dental', address: 'no-reply@intake.test' });
    expect(mail.text).toContain('Thank you for writing to Acme Dental.');
  });

  describe('the daily digest', () => {
    afterEach(() => {
      offsetMs = 0;
    });

    it('labels the digest with the client: subject, heading and sender', async () => {
      const { owner, submit } = await contactForm('Acme Dental', {
        notification_schedule: 'daily',
        digest_through: new Date(),
      });
      await submit({ name: 'Ada', topic: 'pricing' });
      offsetMs = DAY_MS + 60_000;
      await eventually(async () => {
        await sendDigests({ ...ctx.platform, mailer: ctx.mailer, now: () => clock.now() });
        return mailsTo(owner).length === 1;
      });
      const mail = await oneMailTo(owner);
      expect(mail.subject).toBe('Daily digest: Contact — Acme Dental (1 new)');
      expect(mail.from?.name).toBe('Acme Dental');
      expect(mail.text).toMatch(/^1 new submission to "Contact" — Acme Dental\n/);
    });
  });

  it('names the client in the alert about a failing webhook of the form', async () => {
    const { owner, account, form } = await contactForm('Acme Dental');
    const hook = await factories.webhook(ctx.platform, { accountId: account.id, formId: form.id });
    await ctx.platform
      .db('webhooks')
      .where({ id: hook.id })
      .update({ failing_since: new Date(Date.now() - 2 * 3_600_000), consecutive_failures: 5 });
    const config = { ...ctx.platform.config, WEBHOOK_FAILURE_ALERT_AFTER: 3_600_000, WEBHOOK_DISABLE_AFTER: 0 };
    await sweepWebhookHealth({ ...ctx.platform, mailer: ctx.mailer, config, now: new Date() });
    const mail = await oneMailTo(owner);
    expect(mail.subject).toBe('Webhook failing: Contact — Acme Dental');
    expect(mail.text).toContain(
      `The webhook ${hook.id} of the form "Contact" of Acme Dental (https://hooks.example.com/…)`,
    );
  });
});

describe('the client named in webhooks', () => {
  it('puts the form’s project beside form_id in the signed envelope, and in a test ping’s', async () => {
    const target = await receiver();
    try {
      const { account, form, client, submit } = await contactForm(HOSTILE);
      const hook = await factories.webhook(ctx.platform, { accountId: account.id, formId: form.id, url: target.url });
      const stored = await submit({ name: 'Ada' });
      const [request] = await eventually(() => target.requests.length === 1 && target.requests);
      const envelope = new Webhook(hook.secret).verify(request!.body, request!.headers as Record<string, string>);
      expect(envelope).toMatchObject({
        type: 'submission.created',
        data: { submission_id: stored.id, form_id: form.id, project: { id: client!.id, name: HOSTILE } },
      });

      const ping = { account_id: account.id, webhook_id: hook.id };
      expect(await requestTestPing(ctx.platform.nats, ping, 10_000)).toMatchObject({ ok: true });
      expect(JSON.parse(target.requests[1]!.body)).toMatchObject({
        type: 'webhook.test',
        data: { form_id: form.id, project: { id: client!.id, name: HOSTILE }, sample: true },
      });
    } finally {
      await target.close();
    }
  });

  it('names the client in a chat message’s title, escaped as the service needs', async () => {
    const target = await receiver();
    try {
      const { account, form, submit } = await contactForm('Acme <Dental> & Co');
      await factories.webhook(ctx.platform, {
        accountId: account.id,
        formId: form.id,
        url: target.url,
        format: 'slack',
      });
      await submit({ name: 'Ada' });
      const [request] = await eventually(() => target.requests.length === 1 && target.requests);
      const message = JSON.parse(request!.body) as { text: string; blocks: { text: { text: string } }[] };
      expect(message.text).toBe('New submission to "Contact" — Acme &lt;Dental&gt; &amp; Co');
      expect(message.blocks[0]!.text.text).toBe('New submission to "Contact" — Acme <Dental> & Co');
    } finally {
      await target.close();
    }
  });
});

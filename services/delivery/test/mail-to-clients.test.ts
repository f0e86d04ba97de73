import PostalMime from 'postal-mime';
import { createMailer, type Mailer } from '@intake/shared/base';
import { newId } from '@intake/shared/contracts';
import { addTestMember, createTestPlatform, factories, smtpSink, type SmtpSink } from '@intake/shared/testing';
import { notifySubmissions, sendDigests } from '../src';
import { autoresponseMail } from '../src/domain/autoresponse';
import { findMailBranding } from '../src/repositories/mail-branding.repository';
import { storedWithoutEvent } from './helpers';

/**
 * Mail an agency can send to its clients: a message to each address, nothing of Intake's above the owner's text,
 * times in the form's zone, the console's link only for whoever can open it, RFC 3834's Auto-Submitted.
 */
let platform: Awaited<ReturnType<typeof createTestPlatform>>;
beforeAll(async () => {
  platform = await createTestPlatform({ PUBLIC_BASE_URL: 'https://forms.agency.test' });
});
afterAll(() => platform.close());

async function withMailer(use: (mailer: Mailer, sink: SmtpSink) => Promise<void>, refuseFirst = 0) {
  const sink = await smtpSink({ refuseFirst });
  const mailer = createMailer({ SMTP_URL: sink.url, MAIL_FROM: 'i@intake.test' }, platform.logger);
  try {
    await use(mailer, sink);
  } finally {
    mailer.close();
    await sink.close();
  }
}

const lc = (address: string) => address.toLowerCase();
const parse = (raw: Buffer | string) => PostalMime.parse(raw);
const header = (parsed: Awaited<ReturnType<typeof parse>>, name: string) =>
  parsed.headers.find((h) => h.key === name)?.value;

/** Hours and minutes of `iso` in `zone`, as a person there reads them (an expectation made apart from Intake's). */
const wallClock = (iso: string, zone: string) =>
  new Date(iso).toLocaleTimeString('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

/**
 * A client's form (in a project of its own) whose addresses are: a member of the whole account, a member limited to
 * this client, one limited to another client, one invited who has not joined, and the client's own address.
 */
async function agencyForm(settings: Record<string, unknown>) {
  const account = await factories.account(platform.db);
  const client = await factories.project(platform.db, account.id, 'Hale Dental');
  const other = await factories.project(platform.db, account.id, 'Summit Roofing');
  const tag = newId('event').slice(-8).toLowerCase();
  const staff = await addTestMember(platform.db, account.id, 'editor', { email: `staff-${tag}@agency.example` });
  const limited = await addTestMember(platform.db, account.id, 'viewer', {
    email: `reception-${tag}@hale.example`,
    projectIds: [client.id],
  });
  const elsewhere = await addTestMember(platform.db, account.id, 'viewer', {
    email: `roofer-${tag}@summit.example`,
    projectIds: [other.id],
  });
  const invited = await addTestMember(platform.db, account.id, 'viewer', {
    email: `new-${tag}@hale.example`,
    status: 'invited',
  });
  const owner = `Dr.Hale-${tag}@Hale.example`;
  // The address a member has, written in other letters on the form: still the member's.
  const to = [staff.email.toUpperCase(), limited.email, elsewhere.email, invited.email, owner];
  const form = await factories.form(platform.db, account.id, { project_id: client.id, notify_emails: to });
  if (Object.keys(settings).length > 0) await platform.db('forms').where({ id: form.id }).update(settings);
  // The sink has each address as SMTP carried it (the domain in lower case): compared in lower case.
  return { accountId: account.id, formId: form.id, to, sunk: to.map(lc), readers: [staff.email, limited.email] };
}

describe('mail fit to forward to a client: notifications', () => {
  it('sends each address a message of its own; the console’s link only to members who can open the form', async () => {
    const form = await agencyForm({ time_zone: 'America/New_York' });
    const event = await storedWithoutEvent(platform, form, { name: 'Ada', email: 'ada@patient.example' });
    await withMailer(async (mailer, sink) => {
      const outcomes = await notifySubmissions({
        ...platform,
        mailer,
        now: new Date(),
        items: [{ event, to: form.to }],
      });
      expect(outcomes).toEqual([{ ack: true }]);
      expect(sink.mails.map((m) => m.to.map(lc))).toEqual(form.sunk.map((a) => [a]));
      const link = `https://forms.agency.test/console/submissions/${event.submission_id}`;
      for (const mail of sink.mails) {
        const parsed = await parse(mail.raw);
        const address = lc(mail.to[0]!);
        // One address in To, nobody in Cc: the client never sees the agency's inbox, nor the other way round.
        expect(parsed.to?.map((a) => lc(a.address ?? ''))).toEqual([address]);
        expect(parsed.cc ?? []).toEqual([]);
        expect(header(parsed, 'auto-submitted')).toBe('auto-generated');
        const reader = form.readers.includes(address);
        expect({ address, link: parsed.text?.includes(link) }).toEqual({ address, link: reader });
        expect({ address, link: parsed.html?.includes('console') }).toEqual({ address, link: reader });
        // Intake's own body: when it arrived, in the form's zone and naming it, never ISO UTC.
        expect(parsed.text).toMatch(/^New submission to "Test form" — Hale Dental\nReceived \d+ \w+ \d{4}, /);
        expect(parsed.text).toContain(wallClock(event.received_at, 'America/New_York'));
        expect(parsed.text).toMatch(/GMT-[45]/);
        expect(parsed.text).not.toContain(event.received_at);
        expect(parsed.text).not.toContain('(submission ');
      }
      const row = await platform
        .db('notifications')
        .where({ dedup_key: `submission:${event.submission_id}` })
        .first();
      expect(row).toMatchObject({ status: 'sent', attempt_count: 1 });
      expect([...row.sent_to].sort()).toEqual([...form.to].sort());
    });
  });

  it('puts nothing of Intake’s above the owner’s text; {{received_at}} is in the form’s zone', async () => {
    const form = await agencyForm({
      time_zone: 'Europe/Paris',
      notification_template: JSON.stringify({
        subject: 'Enquiry from {{name}}',
        text: 'Dear Hale Dental,\n\n{{name}} wrote at {{received_at}}:\n{{message}}',
      }),
    });
    const event = await storedWithoutEvent(platform, form, { name: 'Ada', message: 'A check-up, please.' });
    await withMailer(async (mailer, sink) => {
      await notifySubmissions({ ...platform, mailer, now: new Date(), items: [{ event, to: form.to }] });
      const client = await parse(sink.mails.find((m) => lc(m.to[0]!) === form.sunk[4])!.raw);
      expect(client.subject).toBe('Enquiry from Ada');
      const paris = wallClock(event.received_at, 'Europe/Paris');
      expect(client.text).toMatch(
        new RegExp(`^Dear Hale Dental,\\n\\nAda wrote at \\d+ \\w+ \\d{4}, ${paris}:\\d\\d CES?T:`),
      );
      expect(client.text).not.toMatch(/New submission|Received|console/);
      expect(client.html).not.toMatch(/<h1|New submission|console/);
      // A member still gets the link, below the owner's text.
      const staff = await parse(sink.mails.find((m) => lc(m.to[0]!) === form.sunk[0])!.raw);
      expect(staff.text).toMatch(/^Dear Hale Dental,[\s\S]*Open it in the console: https:\/\/forms\.agency\.test\//);
    });
  });
});

describe('mail fit to forward to a client: a refused message', () => {
  it('sends a refused message again, and only it', async () => {
    const form = await agencyForm({});
    const event = await storedWithoutEvent(platform, form);
    await withMailer(async (mailer, sink) => {
      const first = await notifySubmissions({ ...platform, mailer, now: new Date(), items: [{ event, to: form.to }] });
      expect(first).toEqual([{ retryInMs: expect.any(Number) }]);
      expect(sink.mails.map((m) => lc(m.to[0]!))).toEqual(form.sunk.slice(1));
      const pending = await platform
        .db('notifications')
        .where({ dedup_key: `submission:${event.submission_id}` })
        .first();
      expect(pending).toMatchObject({ status: 'pending', attempt_count: 1 });
      expect(pending.last_error).toContain(form.to[0]);
      await platform.db('notifications').where({ id: pending.id }).update({ lease_until: null });
      expect(
        await notifySubmissions({ ...platform, mailer, now: new Date(), items: [{ event, to: form.to }] }),
      ).toEqual([{ ack: true }]);
      expect(sink.mails.map((m) => lc(m.to[0]!))).toEqual([...form.sunk.slice(1), form.sunk[0]]);
    }, 1);
  });
});

describe('mail fit to forward to a client: autoresponses and digests', () => {
  it('marks an autoresponse Auto-Submitted: auto-replied, with {{received_at}} in the form’s zone', async () => {
    const form = await agencyForm({ time_zone: 'Asia/Kolkata' });
    const event = await storedWithoutEvent(platform, form, { email: 'ada@patient.example' });
    const branding = await findMailBranding(platform.db, form.formId);
    const mail = autoresponseMail(
      { enabled: true, subject: 'Thanks', text: 'We got your message of {{received_at}}.' },
      event,
      'ada@patient.example',
      branding,
    );
    expect(mail.autoSubmitted).toBe('auto-replied');
    expect(mail.text).toContain(`${wallClock(event.received_at, 'Asia/Kolkata')}:`);
    expect(mail.text).toContain('GMT+5:30');
    await withMailer(async (mailer, sink) => {
      await mailer.send(mail);
      const parsed = await parse(sink.mails[0]!.raw);
      expect(header(parsed, 'auto-submitted')).toBe('auto-replied');
      expect(header(parsed, 'x-auto-response-suppress')).toBe('All');
    });
  });

  it('sends the daily digest to each address alone, its times in the form’s zone and links only for members', async () => {
    const form = await agencyForm({ time_zone: 'Europe/London', notification_schedule: 'daily' });
    const start = new Date(Date.now() - 3 * 86_400_000);
    await platform.db('forms').where({ id: form.formId }).update({ digest_through: start });
    const event = await storedWithoutEvent(platform, form, { name: 'Ada' });
    await platform
      .db('submissions')
      .where({ id: event.submission_id })
      .update({ received_at: new Date(start.getTime() + 3_600_000) });
    await withMailer(async (mailer, sink) => {
      let sent = 0;
      for (let i = 0; i < 20 && sent === 0; i++)
        sent = await sendDigests({ ...platform, mailer, now: () => new Date() }, 500);
      const mails = sink.mails.filter((m) => form.sunk.includes(lc(m.to[0]!)));
      expect(mails.map((m) => m.to.map(lc))).toEqual(form.sunk.map((a) => [a]));
      for (const mail of mails) {
        const parsed = await parse(mail.raw);
        const reader = form.readers.includes(lc(mail.to[0]!));
        expect(header(parsed, 'auto-submitted')).toBe('auto-generated');
        expect({ to: mail.to[0], link: parsed.text?.includes('/console/') }).toEqual({ to: mail.to[0], link: reader });
        expect(parsed.text).toMatch(/Received from \d+ \w+ \d{4}, \d\d:\d\d:\d\d GMT to/);
      }
    });
  });
});

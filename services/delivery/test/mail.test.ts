import PostalMime from 'postal-mime';
import { createMailer, type Mailer } from '@intake/shared/base';
import { EVENT_PAYLOAD_MAX_BYTES, newId, type SubmissionEvent } from '@intake/shared/contracts';
import { createTestPlatform, eventually, factories, smtpSink, type SmtpSink } from '@intake/shared/testing';
import { MAIL_LEASE_MS, notifySubmissions, requestNotification } from '../src';
import { accountWithForm, startDelivery, storedWithoutEvent, submit } from './helpers';

let smtp: SmtpSink;
let ctx: Awaited<ReturnType<typeof startDelivery>>;
beforeAll(async () => {
  smtp = await smtpSink({ refuseFirst: 1 });
  ctx = await startDelivery({
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Intake <no-reply@intake.test>',
    WEBHOOK_RETRY_SCHEDULE: '200ms',
  });
});
afterAll(async () => {
  await ctx.close();
  await smtp.close();
});

/** A mailer to a test SMTP server of its own (`refuseFirst` as smtpSink's); both are closed once `use` is done. */
async function withMailer(use: (mailer: Mailer, sink: SmtpSink) => Promise<void>, refuseFirst = 0) {
  const sink = await smtpSink({ refuseFirst });
  const mailer = createMailer({ SMTP_URL: sink.url, MAIL_FROM: 'i@intake.test' }, ctx.platform.logger);
  try {
    await use(mailer, sink);
  } finally {
    mailer.close();
    await sink.close();
  }
}

/** A header of a parsed mail, by its lower-case name. */
const header = (parsed: Awaited<ReturnType<typeof PostalMime.parse>>, name: string) =>
  parsed.headers.find((h) => h.key === name)?.value;

/** A received submission's event for a form of `accountWithForm`, stored without going through the outbox. */
const eventOf = (form: { accountId: string; formId: string }) => storedWithoutEvent(ctx.platform, form);

describe('notification e-mail: through the running service', () => {
  it('mails each of the form’s addresses a message of its own with the fields, file links and the submitter as Reply-To; a refused message is sent again, and only it', async () => {
    const { accountId, formId } = await accountWithForm(ctx.platform, ['owner@example.com', 'team@example.com']);
    // A fresh id: the file row is stored, and the test database outlives a run.
    const fileId = newId('file');
    const event = await submit(ctx.platform, {
      accountId,
      formId,
      payload: { name: 'Grace Hopper', email: 'grace@navy.example', message: 'Found a moth.\nSecond line.' },
      files: [
        {
          id: fileId,
          field: 'attachment',
          filename: 'bug.png',
          content_type: 'image/png',
          size: 1234,
        },
      ],
    });
    const row = await eventually(
      () =>
        ctx.platform
          .db('notifications')
          .where({ dedup_key: `submission:${event.submission_id}`, status: 'sent' })
          .first(),
      { timeoutMs: 10_000 },
    );
    // The sink refused the first message (to owner@): team@'s went in the same attempt, and only owner@'s again.
    expect(row).toMatchObject({
      kind: 'submission',
      attempt_count: 2,
      recipients: ['owner@example.com', 'team@example.com'],
      sent_to: expect.arrayContaining(['owner@example.com', 'team@example.com']),
    });
    expect(smtp.mails.map((m) => m.to)).toEqual([['team@example.com'], ['owner@example.com']]);
    for (const mail of smtp.mails) {
      const parsed = await PostalMime.parse(mail.raw);
      expect(parsed.to?.map((a) => a.address)).toEqual(mail.to);
      expect(parsed.subject).toBe('New submission: Test form');
      expect(parsed.from?.address).toBe('no-reply@intake.test');
      expect(parsed.replyTo?.[0]?.address).toBe('grace@navy.example');
      expect(header(parsed, 'auto-submitted')).toBe('auto-generated');
      expect(parsed.text).toContain('name: Grace Hopper');
      expect(parsed.text).toContain('Found a moth.');
      expect(parsed.text).toContain('Second line.');
      // Neither address is a member's: no link into a console they cannot open.
      expect(parsed.text).not.toContain('/console/');
      expect(parsed.html).not.toContain('console');
      expect(parsed.text).toMatch(
        new RegExp(
          `bug\\.png \\(attachment, 1234 bytes\\): ` +
            `${ctx.platform.config.PUBLIC_BASE_URL}/v1/files/${fileId}\\?expires=\\d+&signature=`,
        ),
      );
    }
  });
});

describe('notification e-mail: sending with a mailer of its own', () => {
  it('sends a submission’s mail once when two copies arrive together, and a copy of one being sent elsewhere waits for it', async () => {
    await withMailer(async (mailer, sink) => {
      const form = await accountWithForm(ctx.platform, ['twice@example.com']);
      const event = await eventOf(form);
      const to = ['twice@example.com'];
      const notify = (events: SubmissionEvent[]) =>
        notifySubmissions({ ...ctx.platform, mailer, now: new Date(), items: events.map((e) => ({ event: e, to })) });
      // The second copy finds the first one's claim: it waits a whole lease, then finds the mail sent.
      expect(await notify([event, event])).toEqual([{ ack: true }, { retryInMs: MAIL_LEASE_MS }]);
      expect(await notify([event])).toEqual([{ ack: true }]);
      expect(sink.mails).toHaveLength(1);

      // Another process holds this one's send for 60 s more: nothing is sent, the copy waits about that long.
      const held = await eventOf(form);
      await ctx.platform.db('notifications').insert({
        id: newId('notification'),
        account_id: form.accountId,
        kind: 'submission',
        dedup_key: `submission:${held.submission_id}`,
        recipients: JSON.stringify(to),
        status: 'pending',
        lease_until: ctx.platform.db.raw(`now() + interval '60 seconds'`),
      });
      const [waiting] = await notify([held]);
      expect(waiting).toEqual({ retryInMs: expect.any(Number) });
      expect((waiting as { retryInMs: number }).retryInMs).toBeGreaterThan(55_000);
      expect((waiting as { retryInMs: number }).retryInMs).toBeLessThanOrEqual(60_000);
      expect(sink.mails).toHaveLength(1);
    });
  });

  it('sends the mails of many submissions over a few reused SMTP connections, each recorded `sent`', async () => {
    await withMailer(async (mailer, sink) => {
      const form = await accountWithForm(ctx.platform, ['many@example.com']);
      const events = await Promise.all(Array.from({ length: 40 }, () => eventOf(form)));
      const outcomes = await notifySubmissions({
        ...ctx.platform,
        mailer,
        now: new Date(),
        items: events.map((event) => ({ event, to: ['many@example.com'] })),
      });
      expect(outcomes).toEqual(events.map(() => ({ ack: true })));
      expect(sink.mails).toHaveLength(40);
      // nodemailer's pool: at most 5 connections (one per mail without it).
      expect(sink.connections()).toBeLessThanOrEqual(5);
      const rows = await ctx.platform
        .db('notifications')
        .whereIn(
          'dedup_key',
          events.map((e) => `submission:${e.submission_id}`),
        )
        .select('status', 'attempt_count', 'lease_until');
      expect(rows).toHaveLength(40);
      expect(rows.every((r) => r.status === 'sent' && r.attempt_count === 1 && r.lease_until === null)).toBe(true);
    });
  });

  it('records a refused send as `pending` (the one vocabulary) and a sent one at the injected clock’s time', async () => {
    await withMailer(async (mailer, refusing) => {
      const { platform } = ctx;
      const event = await eventOf(await accountWithForm(platform, ['clock@example.com']));
      const notify = async (now: Date) =>
        (await notifySubmissions({ ...platform, mailer, now, items: [{ event, to: ['clock@example.com'] }] }))[0];
      const row = () =>
        platform
          .db('notifications')
          .where({ dedup_key: `submission:${event.submission_id}` })
          .first();
      expect(await notify(new Date('2031-02-03T04:05:07.000Z'))).toEqual({ retryInMs: expect.any(Number) });
      expect(await row()).toMatchObject({ status: 'pending', attempt_count: 1, sent_at: null });
      await notify(new Date('2031-02-03T04:05:09.000Z'));
      expect(await row()).toMatchObject({ status: 'sent', attempt_count: 2 });
      expect((await row()).sent_at.toISOString()).toBe('2031-02-03T04:05:09.000Z');
      expect(refusing.mails).toHaveLength(1);
    }, 1);
  });
});

describe('notification e-mail: what is mailed and what is not', () => {
  it('takes its subject and Reply-To from the post’s _subject and _replyto (its directions), before any field', async () => {
    await withMailer(async (mailer, sink) => {
      const form = await accountWithForm(ctx.platform, ['directed@example.com']);
      const event = await eventOf(form);
      const directed = {
        ...event,
        payload: { name: 'Ada', email: 'field@example.com' },
        directions: { subject: 'Quote request from Ada', reply_to: 'ada@example.com' },
      };
      const plain = { ...(await eventOf(form)), payload: { name: 'Grace', email: 'grace@example.com' } };
      const items = [directed, plain].map((e) => ({ event: e, to: ['directed@example.com'] }));
      await notifySubmissions({ ...ctx.platform, mailer, now: new Date(), items });
      const replyTo = (raw: string) => /^Reply-To: (.*)$/im.exec(raw)?.[1]?.trim();
      const mails = [...sink.mails].sort((a, b) => a.subject.localeCompare(b.subject));
      expect(mails.map((m) => [m.subject, replyTo(m.raw)])).toEqual([
        ['New submission: Test form', 'grace@example.com'],
        ['Quote request from Ada', 'ada@example.com'],
      ]);
    });
  });

  it('mails the fields of a submission whose event went without them (too large for a message), read from the submission', async () => {
    const { accountId, formId } = await accountWithForm(ctx.platform, ['large@example.com']);
    const event = await submit(ctx.platform, {
      accountId,
      formId,
      payload: { email: 'writer@example.com', essay: 'A long essay.' },
      omitPayload: true,
    });
    const mail = await eventually(() => smtp.mails.find((m) => m.to.includes('large@example.com')), {
      timeoutMs: 10_000,
    });
    const parsed = await PostalMime.parse(mail.raw);
    expect(parsed.text).toContain('essay: A long essay.');
    expect(parsed.replyTo?.[0]?.address).toBe('writer@example.com');
    expect(event.payload).toEqual({});
  });

  it('sends nothing for spam, nothing without addresses, and no Reply-To without an e-mail field', async () => {
    const { accountId, formId } = await accountWithForm(ctx.platform, ['owner@example.com']);
    const silent = await accountWithForm(ctx.platform, []);
    const before = smtp.mails.length;
    const spam = await submit(ctx.platform, {
      accountId,
      formId,
      status: 'spam',
      payload: { email: 'spam@example.com' },
    });
    await submit(ctx.platform, { ...silent, payload: { email: 'x@example.com' } });
    const genuine = await submit(ctx.platform, {
      accountId,
      formId,
      payload: { name: 'No address', email: 'not-an-address' },
    });
    await eventually(() =>
      ctx.platform
        .db('notifications')
        .where({ dedup_key: `submission:${genuine.submission_id}`, status: 'sent' })
        .first(),
    );
    expect(smtp.mails.length).toBe(before + 1);
    const parsed = await PostalMime.parse(smtp.mails.at(-1)!.raw);
    expect(parsed.text).toContain('name: No address');
    expect(parsed.replyTo).toBeUndefined();
    expect(await ctx.platform.db('notifications').where({ dedup_key: `submission:${spam.submission_id}` })).toEqual([]);
  });

  it('mails a form’s submissions when its only webhook is disabled, and fans none of them out', async () => {
    const form = await accountWithForm(ctx.platform, ['disabled-hook@example.com']);
    await factories.webhook(ctx.platform, { ...form, enabled: false });
    const event = await submit(ctx.platform, { ...form, payload: { name: 'Ada' } });
    await eventually(() => smtp.mails.find((m) => m.to.includes('disabled-hook@example.com')), { timeoutMs: 10_000 });
    expect(await ctx.platform.db('deliveries').where({ submission_id: event.submission_id })).toEqual([]);
  });
});

describe('notification e-mail: asking for a mail', () => {
  it('asks for a mail with the event’s fields, or without them when they are over the event limit', async () => {
    // A platform with no consumer: the requests stay in the work queue to be read.
    const platform = await createTestPlatform();
    const { nats } = platform;
    try {
      const form = await accountWithForm(platform, ['big@example.com']);
      const small = await eventOf(form);
      const large = { ...(await eventOf(form)), payload: { message: 'x'.repeat(EVENT_PAYLOAD_MAX_BYTES + 1) } };
      await requestNotification(nats, { event: small, to: ['big@example.com'] });
      await requestNotification(nats, { event: large, to: ['big@example.com'] });
      await requestNotification(nats, { event: large, to: ['big@example.com'] });
      const info = await nats.jsm.streams.info(nats.names.deliveriesStream);
      expect(info.state.messages).toBe(2); // the second request for one event is a duplicate
      const read = async (seq: number) =>
        JSON.parse(
          new TextDecoder().decode((await nats.jsm.streams.getMessage(nats.names.deliveriesStream, { seq })).data),
        );
      const [first, second] = [await read(info.state.first_seq), await read(info.state.first_seq + 1)];
      expect(first).toEqual({ event_id: `${small.event_id}.mail`, event: small, to: ['big@example.com'] });
      expect(second).toEqual({
        event_id: `${large.event_id}.mail`,
        event: { ...large, payload: {}, payload_omitted: true },
        to: ['big@example.com'],
      });
    } finally {
      await platform.close();
    }
  });
});

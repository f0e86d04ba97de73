import { eventually, factories, smtpSink, type SmtpSink } from '@intake/shared/testing';
import { createMailer } from '@intake/shared/base';
import { NOTIFICATION_STATUSES } from '@intake/shared/contracts';
import { reachedThresholds, sendQuotaWarnings } from '../src';
import { manualClock, processedCount, startUsage, type UsageHarness } from './helpers';

/** One usage service mailing through a real SMTP server, with a clock the tests set, shared by the whole file. */
const clock = manualClock('2030-05-10T12:00:00.000Z');
let smtp: SmtpSink;
let h: UsageHarness;
beforeAll(async () => {
  smtp = await smtpSink();
  h = await startUsage({ clock, overrides: { SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await h.close();
  await smtp.close();
});

async function account(props: { quota: number; email?: string | null }) {
  const email = props.email === undefined ? `owner-${Math.random().toString(36).slice(2)}@example.test` : props.email;
  const acc = await factories.account(h.platform.db, {
    plan: 'pro',
    quota: props.quota,
    contactEmail: email ?? undefined,
  });
  const form = await factories.form(h.platform.db, acc.id);
  return { ...acc, email, formId: form.id };
}

async function post(acc: { id: string; formId: string }, count: number, at?: Date) {
  const events: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++)
    events.push(
      (await factories.submission(h.platform, { accountId: acc.id, formId: acc.formId, receivedAt: at })).event,
    );
  const ids = events.map((e) => String(e.event_id));
  await eventually(() => processedCount(h.platform, ids).then((c) => c === ids.length), {
    message: 'events counted',
  });
  return events;
}

const mailsTo = (email: string | null) => smtp.mails.filter((m) => m.to.includes(email ?? ''));
const notifications = (accountId: string) =>
  h.platform
    .db('notifications')
    .where({ account_id: accountId })
    .orderBy('kind')
    .select('kind', 'dedup_key', 'status', 'attempt_count');

describe('quota warnings', () => {
  it('are reached at 80% and 100% of the quota (none for a zero quota)', () => {
    expect(reachedThresholds(7, 10)).toEqual([]);
    expect(reachedThresholds(8, 10)).toEqual([80]);
    expect(reachedThresholds(10, 10)).toEqual([80, 100]);
    expect(reachedThresholds(3, 3)).toEqual([80, 100]);
    expect(reachedThresholds(79, 99)).toEqual([]);
    expect(reachedThresholds(80, 99)).toEqual([80]);
    expect(reachedThresholds(0, 0)).toEqual([]);
  });
});

describe('quota warnings over a real SMTP server: when to mail', () => {
  it('mails the contact address once at 80% and once at 100%, and again the next month', async () => {
    clock.set('2030-05-10T12:00:00.000Z');
    const acc = await account({ quota: 10 });
    const events = await post(acc, 7);
    await eventually(async () => (await notifications(acc.id)).every((n) => n.status === 'sent'), {
      message: 'both marked sent',
    });
    expect(await notifications(acc.id)).toEqual([]);

    await post(acc, 1);
    await eventually(() => mailsTo(acc.email).length === 1, { message: 'the 80% mail' });
    expect(mailsTo(acc.email)[0]).toMatchObject({
      subject: expect.stringContaining('80%'),
      text: expect.stringContaining('8 of its 10 submissions for May 2030'),
    });

    await post(acc, 1);
    events.push(...(await post(acc, 1)));
    await eventually(() => mailsTo(acc.email).length === 2, { message: 'the 100% mail' });
    expect(mailsTo(acc.email)[1]).toMatchObject({
      subject: expect.stringContaining('quota reached'),
      text: expect.stringContaining('refused with 402 quota-exceeded until the quota resets on 2030-06-01'),
    });
    await eventually(async () => (await notifications(acc.id)).every((n) => n.status === 'sent'), {
      message: 'both marked sent',
    });
    expect(await notifications(acc.id)).toEqual([
      { kind: 'quota-100', dedup_key: `quota-100:${acc.id}:2030-05-01`, status: 'sent', attempt_count: 1 },
      { kind: 'quota-80', dedup_key: `quota-80:${acc.id}:2030-05-01`, status: 'sent', attempt_count: 1 },
    ]);

    // Redelivered or republished events of the same month change nothing.
    expect(events).toHaveLength(8);
    for (const event of events)
      await h.platform.nats.js.publish(h.platform.nats.names.subject('submission.created'), JSON.stringify(event), {
        msgID: `${String(event.event_id)}-again`,
      });
    // More submissions over 100% (an operator override, a race) warn no one again either.
    await post(acc, 1);
    await eventually(
      async () =>
        (await h.platform.nats.jsm.consumers.info(h.platform.nats.names.eventsStream, 'usage')).num_pending === 0,
    );

    // June: the period key changes, so the thresholds are crossed afresh.
    clock.set('2030-06-01T00:00:05.000Z');
    await post(acc, 8);
    await eventually(() => mailsTo(acc.email).length === 3, { message: 'June’s 80% mail' });
    expect(mailsTo(acc.email)[2]!.text).toContain('for June 2030');
    expect(mailsTo(acc.email)).toHaveLength(3);
  });

  it('sends only the 100% mail when one submission crosses both thresholds', async () => {
    clock.set('2030-05-10T12:00:00.000Z');
    const acc = await account({ quota: 1 });
    await post(acc, 1);
    await eventually(() => mailsTo(acc.email).length === 1);
    expect(mailsTo(acc.email)[0]!.subject).toContain('quota reached');
    await eventually(async () => (await notifications(acc.id))[0]?.status === 'sent');
    expect((await notifications(acc.id)).map((n) => [n.kind, n.status])).toEqual([
      ['quota-100', 'sent'],
      ['quota-80', 'skipped'],
    ]);
  });
});

describe('quota warnings over a real SMTP server: who is not mailed, and refused sends', () => {
  it('mails no one without a contact address, and not for a late event of a past month', async () => {
    clock.set('2030-05-10T12:00:00.000Z');
    const nobody = await account({ quota: 2, email: null });
    await post(nobody, 2);
    expect(await notifications(nobody.id)).toEqual([]);

    const late = await account({ quota: 2 });
    await post(late, 2, new Date('2030-04-30T23:00:00.000Z'));
    expect(await notifications(late.id)).toEqual([]);
  });

  it('retries a warning the SMTP server refused until it is sent, once', async () => {
    clock.set('2030-05-10T12:00:00.000Z');
    const acc = await account({ quota: 5 });
    smtp.refuse(true);
    await post(acc, 4);
    // The attempt is counted when claimed (`sending`); the refusal puts it back to `pending`.
    await eventually(
      async () => {
        const [n] = await notifications(acc.id);
        return n?.attempt_count >= 1 && n?.status === 'pending';
      },
      { message: 'a refused attempt' },
    );
    const [failed] = await notifications(acc.id);
    expect(failed).toMatchObject({ kind: 'quota-80', status: 'pending' });
    expect((await h.platform.db('notifications').where({ account_id: acc.id }).first('last_error')).last_error).toMatch(
      /451|try later/,
    );
    expect(mailsTo(acc.email)).toHaveLength(0);

    smtp.refuse(false);
    await eventually(async () => (await notifications(acc.id))[0]?.status === 'sent', {
      message: 'sent by the retry timer',
    });
    expect(mailsTo(acc.email)).toHaveLength(1);
  });
});

describe('quota warnings over a real SMTP server: commits and statuses', () => {
  it('sends a warning only after the claim has committed: a commit that fails sends nothing, and it is sent once later', async () => {
    clock.set('2030-05-10T12:00:00.000Z');
    const acc = await account({
      quota: 5,
      email: `commit-fails-${Math.random().toString(36).slice(2)}@example.test`,
    });
    const { db } = h.platform;
    // A deferred constraint trigger: every update of this account's warnings fails at COMMIT.
    await db.raw(`CREATE OR REPLACE FUNCTION test_refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.recipients::text LIKE '%commit-fails-%' THEN RAISE EXCEPTION 'commit refused (test)'; END IF; RETURN NEW; END $$`);
    await db.raw(`CREATE CONSTRAINT TRIGGER test_refuse_commit AFTER UPDATE ON notifications
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_refuse_commit()`);
    const mailer = createMailer(h.platform.config, h.platform.logger);
    try {
      await post(acc, 4);
      await eventually(async () => (await notifications(acc.id)).length === 1, { message: 'the 80% warning queued' });
      const send = () =>
        sendQuotaWarnings({
          db,
          mailer,
          logger: h.platform.logger,
          publicBaseUrl: 'https://intake.test',
          now: () => clock.now(),
        });
      // The running workers try too (SKIP LOCKED may hand this caller nothing): three refused commits here.
      let refused = 0;
      await eventually(
        async () => {
          await send().catch((err: Error) => {
            if (/commit refused/.test(err.message)) refused++;
          });
          return refused >= 3;
        },
        { message: 'three refused commits' },
      );
      expect(await notifications(acc.id)).toEqual([expect.objectContaining({ status: 'pending', attempt_count: 0 })]);
      expect(mailsTo(acc.email)).toHaveLength(0);
    } finally {
      mailer.close();
      await db.raw('DROP TRIGGER IF EXISTS test_refuse_commit ON notifications');
    }
    await eventually(async () => (await notifications(acc.id))[0]?.status === 'sent', { message: 'sent later' });
    expect(mailsTo(acc.email)).toHaveLength(1);
  });

  it('holds notifications.status to one vocabulary', async () => {
    const acc = await account({ quota: 5 });
    const row = (status: string) => ({
      id: `ntf_${status}_${Math.random().toString(36).slice(2)}`,
      account_id: acc.id,
      kind: 'submission',
      dedup_key: `test:${Math.random()}`,
      recipients: '[]',
      status,
    });
    await expect(h.platform.db('notifications').insert(row('retrying'))).rejects.toThrow(/notifications_status_check/);
    for (const status of NOTIFICATION_STATUSES) await h.platform.db('notifications').insert(row(status));
  });
});

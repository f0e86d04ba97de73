import { createMailer, type Mailer } from '@intake/shared/base';
import { ACK } from '@intake/shared/messaging';
import { eventually, factories, smtpSink, useTestPlatform, type SmtpSink } from '@intake/shared/testing';
import { fanOutSubmissions } from '../services/delivery/src/domain/fan-out';
import { notifySubmissions } from '../services/delivery/src/domain/notify';
import { autorespond } from '../services/delivery/src/domain/autoresponse';
import { eraseDataSubject } from '../services/management/src/lifecycle/data-subjects';
import { unaudited } from '../services/management/src/platform/audit-trail';
import { deleteSubmissionsOfForm } from '../services/management/src/lifecycle/purge.repository';

/**
 * Erasure and deletion against the delivery service's work on the same submission, on the real Postgres: what was
 * erased never leaves afterwards (no mail, no delivery), and no row holding its data comes back.
 */
const platform = useTestPlatform();
let smtp: SmtpSink;
let mailer: Mailer;
beforeAll(async () => {
  smtp = await smtpSink();
  mailer = createMailer({ SMTP_URL: smtp.url, MAIL_FROM: 'i@intake.test' }, platform.logger);
});
afterAll(async () => {
  mailer.close();
  await smtp.close();
});

const VISITOR = 'erase-me@visitor.example';

/** A form with an owner address, an autoresponse and a loopback webhook, and one stored submission from VISITOR. */
async function submitted() {
  const account = await factories.account(platform.db);
  const form = await factories.form(platform.db, account.id, { notify_emails: ['owner@example.com'] });
  await factories.webhook(platform, { accountId: account.id, formId: form.id, url: 'http://127.0.0.1:9/hook' });
  const stored = await factories.submission(platform, {
    accountId: account.id,
    formId: form.id,
    payload: { email: VISITOR, message: 'please forget me' },
  });
  return { accountId: account.id, formId: form.id, ...stored };
}

const count = async (query: Promise<{ n: string | number }[]>) => Number((await query)[0]?.n);
const rowsOf = async (submissionId: string) => ({
  deliveries: await count(platform.db('deliveries').where('submission_id', submissionId).count('* as n')),
  notifications: await count(
    platform
      .db('notifications')
      .whereIn('dedup_key', [`submission:${submissionId}`, `autoresponse:${submissionId}`])
      .count('* as n'),
  ),
});
const none = 0;

describe('an erasure while mail is queued', () => {
  it('sends neither the owner’s notification nor the autoresponse afterwards, and their rows do not come back', async () => {
    const s = await submitted();
    // The fan-out queued both mails (their messages carry the payload); then the person is erased.
    expect(
      await eraseDataSubject({ ...platform, audit: unaudited, accountId: s.accountId, email: VISITOR, projects: null }),
    ).toBe(1);
    const deps = { ...platform, mailer, now: new Date() };
    expect(await notifySubmissions({ ...deps, items: [{ event: s.event, to: ['owner@example.com'] }] })).toEqual([ACK]);
    const settings = { enabled: true, subject: 'Thanks', text: 'We got {{message}}' };
    const outcome = await autorespond(
      { ...deps, leaseMs: 60_000, maxAttempts: 5, record: async () => undefined },
      { event: s.event, settings },
    );
    expect(outcome).toEqual(ACK);
    expect(smtp.mails).toEqual([]);
    expect(await rowsOf(s.id)).toEqual({ deliveries: none, notifications: none });
  });
});

describe('a deletion while the submission is being fanned out', () => {
  it('leaves no delivery holding the payload, whichever comes first', async () => {
    const s = await submitted();
    // The deletion holds the submission (uncommitted) while the fan-out runs.
    const deleting = await platform.db.transaction();
    await deleteSubmissionsOfForm(deleting, s.formId, [s.id]);
    const fanOut = fanOutSubmissions({ ...platform, events: [{ event: s.event }], now: new Date() });
    const waiting = () =>
      platform.db
        .raw(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO deliveries%'`)
        .then((r: { rows: unknown[] }) => r.rows.length > 0);
    // Either it waits for the deletion (as it must) or, broken, it has finished without waiting.
    await Promise.race([fanOut, eventually(waiting, { timeoutMs: 10_000 })]);
    await deleting.commit();
    expect(await fanOut).toBe(0);
    expect(await rowsOf(s.id)).toEqual({ deliveries: none, notifications: none });

    // The other order: fanned out first, then deleted: the deletion removes what the fan-out made.
    const t = await submitted();
    expect(await fanOutSubmissions({ ...platform, events: [{ event: t.event }], now: new Date() })).toBe(1);
    await platform.db.transaction((trx) => deleteSubmissionsOfForm(trx, t.formId, [t.id]));
    expect(await rowsOf(t.id)).toEqual({ deliveries: none, notifications: none });
  });
});

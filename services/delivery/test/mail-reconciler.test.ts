import { eventually, smtpSink, useStarted, type SmtpSink } from '@intake/shared/testing';
import { requeueDueNotifications } from '../src/domain/parking';
import type { SubmissionEvent } from '@intake/shared/contracts';
import { fanOutSubmissions } from '../src/domain/fan-out';
import { insertOwnerNotifications } from '../src/repositories/notification.repository';
import { accountWithForm, startDelivery, storedWithoutEvent, submit } from './helpers';

// A refused mail waits two minutes: over PARK_AFTER_MS, so it waits in Postgres, not in JetStream. RECONCILE_AFTER is a
// day, so the process's own pump leaves every row alone until a test makes it due.
let smtp: SmtpSink;
const ctx = useStarted(async () => {
  smtp = await smtpSink();
  const started = await startDelivery({
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Intake <no-reply@intake.test>',
    WEBHOOK_RETRY_SCHEDULE: '2m',
    RECONCILE_AFTER: '1d',
  });
  return {
    ...started,
    close: async () => {
      await started.close();
      await smtp.close();
    },
  };
});

const DAY = 86_400_000;

const mailsTo = (address: string) => smtp.mails.filter((m) => m.to.includes(address));

/** The owner's mail row of a submission. */
const rowOf = (submissionId: string) =>
  ctx.platform
    .db('notifications')
    .where({ dedup_key: `submission:${submissionId}` })
    .first();

/** Makes a row due now, and runs two pumps at once (beside the process's own, every 5 s). */
async function dueNowAndPump(id: string): Promise<void> {
  const { db, nats } = ctx.platform;
  await db('notifications').where({ id }).update({ next_attempt_at: new Date() });
  await Promise.all([1, 2].map(() => requeueDueNotifications({ db, nats, now: new Date(), recheckMs: DAY })));
}

/** The fan-out of `event` as the consumer runs it, publishing under `prefix` (a prefix no stream holds loses them). */
function fanOutInto(prefix: string, event: SubmissionEvent) {
  const { nats } = ctx.platform;
  const lost = { ...nats, names: { ...nats.names, subject: (name: string) => `${prefix}.${name}` } };
  return fanOutSubmissions({ ...ctx.platform, nats: lost, events: [{ event }], now: new Date() });
}

/** Every mail request handed out has been settled (so a second request for one mail would have been seen). */
async function mailConsumerIdle(): Promise<void> {
  const { nats } = ctx.platform;
  await eventually(async () => {
    const info = await nats.jsm.consumers.info(nats.names.deliveriesStream, 'delivery-mail');
    return info.num_ack_pending === 0 && info.num_pending === 0;
  });
}

describe('an owner’s mail whose request is lost', () => {
  it('has its row from the fan-out, and the pump asks for it again when it is due: one mail', async () => {
    const address = `lost-${Date.now()}@example.com`;
    const form = await accountWithForm(ctx.platform, [address]);
    const { submission_id } = await submit(ctx.platform, { ...form, payload: { name: 'Ada', message: 'hello' } });
    // Through the fan-out: its row is there, sent, nothing more to look at.
    await eventually(async () => (await rowOf(submission_id))?.status === 'sent');
    expect(await rowOf(submission_id)).toMatchObject({ attempt_count: 1, next_attempt_at: null });
    expect(mailsTo(address)).toHaveLength(1);

    // Another submission whose request never reached the mail consumer: the fan-out wrote its row, then its publish
    // was lost (here: to a subject no stream holds). Looked at a day later (RECONCILE_AFTER), it is still pending.
    const other = `lost-twin-${Date.now()}@example.com`;
    const orphan = await storedWithoutEvent(ctx.platform, await accountWithForm(ctx.platform, [other]), {
      name: 'Lin',
    });
    await expect(fanOutInto('nowhere', orphan)).rejects.toThrow();
    const row = await rowOf(orphan.submission_id);
    expect(row).toMatchObject({ status: 'pending', attempt_count: 0, lease_until: null });
    expect(row.next_attempt_at.getTime() - Date.now()).toBeGreaterThan(DAY - 60_000);
    expect(mailsTo(other)).toHaveLength(0);

    // Asked for by two pumps at once and the process's own: one mail, with the submission's fields.
    await dueNowAndPump(row.id);
    await eventually(async () => (await rowOf(orphan.submission_id))?.status === 'sent');
    await mailConsumerIdle();
    expect(mailsTo(other)).toHaveLength(1);
    expect(mailsTo(other)[0]!.text).toContain('Lin');
  });

  it('is skipped, not left pending, when its submission is gone', async () => {
    const form = await accountWithForm(ctx.platform);
    const gone = await submit(ctx.platform, { ...form, payload: { name: 'Gone' } });
    await insertOwnerNotifications(
      ctx.platform.db,
      [{ accountId: gone.account_id, submissionId: gone.submission_id, recipients: ['gone@example.com'] }],
      { recheckMs: DAY, now: new Date() },
    );
    const row = await rowOf(gone.submission_id);
    await ctx.platform.db('submissions').where({ id: gone.submission_id }).delete();
    await dueNowAndPump(row.id);
    expect(await rowOf(gone.submission_id)).toMatchObject({ status: 'skipped', next_attempt_at: null });
    expect(mailsTo('gone@example.com')).toHaveLength(0);
  });
});

describe('a refused mail whose retry waits over a minute', () => {
  it('leaves JetStream, waits in Postgres, and is sent once when due', async () => {
    const address = `retry-${Date.now()}@example.com`;
    const form = await accountWithForm(ctx.platform, [address]);
    smtp.refuse(true);
    let submissionId: string;
    try {
      ({ submission_id: submissionId } = await submit(ctx.platform, { ...form, payload: { name: 'Retry' } }));
      await eventually(async () => (await rowOf(submissionId))?.attempt_count === 1);
    } finally {
      smtp.refuse(false);
    }
    const row = await rowOf(submissionId);
    expect(row).toMatchObject({ status: 'pending', lease_until: null });
    expect(row.next_attempt_at.getTime() - Date.now()).toBeGreaterThan(60_000);
    // Its message is acknowledged: nothing of it counts toward the mail consumer's max_ack_pending.
    await mailConsumerIdle();
    expect(mailsTo(address)).toHaveLength(0);

    await dueNowAndPump(row.id);
    await eventually(async () => (await rowOf(submissionId))?.status === 'sent');
    await mailConsumerIdle();
    expect(await rowOf(submissionId)).toMatchObject({ attempt_count: 2, next_attempt_at: null });
    expect(mailsTo(address)).toHaveLength(1);
  });
});

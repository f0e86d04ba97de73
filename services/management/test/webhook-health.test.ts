import PostalMime from 'postal-mime';
import { createMailer, type Mailer } from '@intake/shared/base';
import { eventually, factories, smtpSink, useStarted } from '@intake/shared/testing';
import { HealthTally, sweepWebhookHealth } from '@intake/delivery';
import { newOwner, ownerWithFailingHook, startManagementWithWorkers } from './helpers';
import { receiver } from '../../delivery/test/helpers';

const ctx = useStarted(() => startManagementWithWorkers({ retryMs: 50, pollMs: 100 }));

type Owner = Awaited<ReturnType<typeof ownerWithFailingHook>>;

/** Stores `n` received submissions of the owner's form and waits until each delivery has failed for good. */
async function failedSubmissions(owner: Owner, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push((await factories.submission(ctx.platform, { accountId: owner.accountId, formId: owner.formId })).id);
  await eventually(
    async () =>
      (await ctx.platform.db('deliveries').whereIn('submission_id', ids).where({ status: 'failed' })).length === n,
    { timeoutMs: 20_000 },
  );
  return ids;
}

const deliveryIdsOf = (submissionIds: string[]) =>
  ctx.platform.db('deliveries').whereIn('submission_id', submissionIds).orderBy('id').pluck('id');

describe('webhook health and replay', () => {
  it('shows the failures, replays exactly the failed deliveries since a time once, then shows the recovery', async () => {
    const owner = await ownerWithFailingHook(ctx);
    try {
      const before = await failedSubmissions(owner, 2);
      const since = new Date();
      const after = await failedSubmissions(owner, 3);
      // The health row is written within a second of the attempts (the delivery process's tally).
      const failing = await eventually(async () => {
        const got = await owner.call('GET', `/v1/webhooks/${owner.hook.id}`);
        return got.body.health.consecutive_failures === 25 && got;
      });
      expect(failing.body.health).toEqual({
        last_24h: { succeeded: 0, failed: 5, pending: 0 },
        last_success_at: null,
        last_failure_at: expect.any(String),
        failing_since: expect.any(String),
        consecutive_failures: 25,
      });
      const listed = await owner.call('GET', `/v1/forms/${owner.formId}/webhooks`);
      expect(listed.body.data[0].health).toEqual(failing.body.health);

      const replay = { status: 'failed', since: since.toISOString() };
      const dry = await owner.call('POST', `/v1/webhooks/${owner.hook.id}/replay`, { ...replay, dry_run: true });
      expect(dry).toMatchObject({ status: 200, body: { replayed: 3 } });
      owner.target.heal();
      const sentBefore = owner.target.requests.length;
      const queued = await owner.call('POST', `/v1/webhooks/${owner.hook.id}/replay`, replay);
      expect(queued).toMatchObject({ status: 202, body: { replayed: 3 } });
      // Asked again while queued or done: nothing matches twice.
      expect((await owner.call('POST', `/v1/webhooks/${owner.hook.id}/replay`, replay)).body).toEqual({ replayed: 0 });

      const replayed = await eventually(() => {
        const got = owner.target.requests.slice(sentBefore);
        return got.length >= 3 && got;
      });
      expect(replayed.map((r) => r.headers['webhook-id']).sort()).toEqual(await deliveryIdsOf(after));
      const recovered = await eventually(async () => {
        const got = await owner.call('GET', `/v1/webhooks/${owner.hook.id}`);
        // The health row is written within a second of the attempts (the delivery process's tally).
        return (
          got.body.health.last_24h.succeeded === 3 && got.body.health.consecutive_failures === 0 && got.body.health
        );
      });
      expect(recovered).toMatchObject({
        last_24h: { succeeded: 3, failed: 2, pending: 0 },
        last_success_at: expect.any(String),
        failing_since: null,
        consecutive_failures: 0,
      });
      expect(await ctx.platform.db('deliveries').whereIn('submission_id', before).pluck('status')).toEqual([
        'failed',
        'failed',
      ]);
      expect(owner.target.requests.length).toBe(sentBefore + 3);
    } finally {
      await owner.target.close();
    }
  });

  it('refuses a replay of a disabled webhook, and a since that is no instant', async () => {
    const owner = await ownerWithFailingHook(ctx);
    try {
      const path = `/v1/webhooks/${owner.hook.id}/replay`;
      expect((await owner.call('POST', path, { since: '2026-02-30T00:00:00Z' })).status).toBe(422);
      await owner.call('PATCH', `/v1/webhooks/${owner.hook.id}`, { enabled: false });
      expect((await owner.call('POST', path, {})).status).toBe(409);
      expect((await owner.call('POST', path, { dry_run: true })).body).toEqual({ replayed: 0 });
    } finally {
      await owner.target.close();
    }
  });
});

describe('webhook formats', () => {
  it('takes a format at creation and sends a chat webhook’s test ping as that service’s message', async () => {
    const target = await receiver();
    try {
      const { formId, call } = await newOwner(ctx);
      const created = await call('POST', `/v1/forms/${formId}/webhooks`, { url: target.url, format: 'discord' });
      expect(created.body.format).toBe('discord');
      expect((await call('POST', `/v1/webhooks/${created.body.id}/test`)).body.ok).toBe(true);
      expect(JSON.parse(target.requests[0]!.body)).toMatchObject({
        content: 'Test message from Intake for "Test form"',
        allowed_mentions: { parse: [] },
      });
      const slack = await call('PATCH', `/v1/webhooks/${created.body.id}`, { format: 'slack' });
      expect(slack.body.format).toBe('slack');
      await call('POST', `/v1/webhooks/${created.body.id}/test`);
      expect(JSON.parse(target.requests[1]!.body).text).toBe('Test message from Intake for "Test form"');
      const sample = await call('GET', `/v1/webhooks/${created.body.id}/sample`);
      expect(JSON.parse(sample.body.body).text).toBe('Test message from Intake for "Test form"');
      // Unsigned: the curl to copy carries no x-service-* or webhook-* header either.
      expect(Object.keys(sample.body.headers).sort()).toEqual(['content-type', 'user-agent']);
      expect(sample.body.curl).not.toContain('x-service-');
      expect((await call('PATCH', `/v1/webhooks/${created.body.id}`, { format: 'irc' })).status).toBe(422);
    } finally {
      await target.close();
    }
  });
});

/** The SMTP stand-in and a mailer sending to it, for the describe block that calls this. */
function useMail() {
  const mail = {} as { smtp: Awaited<ReturnType<typeof smtpSink>>; mailer: Mailer };
  beforeAll(async () => {
    mail.smtp = await smtpSink();
    mail.mailer = createMailer(
      { SMTP_URL: `smtp://127.0.0.1:${mail.smtp.port}`, MAIL_FROM: 'i@intake.test' },
      ctx.platform.logger,
    );
  });
  afterAll(async () => {
    mail.mailer.close();
    await mail.smtp.close();
  });
  return mail;
}

/**
 * An owner whose webhook has failed, its form's notices going to an address of its own (the sweep also takes
 * webhooks left failing by other tests and earlier runs), a clock at the start of the failing streak, and a sweep
 * on that clock with `after` as the alert and disable delays.
 */
async function failingWebhook(mail: ReturnType<typeof useMail>, after: { alert: number; disable: number }) {
  const owner = await ownerWithFailingHook(ctx);
  const address = `owner-${owner.hook.id}@example.com`;
  try {
    await owner.call('PATCH', `/v1/forms/${owner.formId}`, { notify_emails: [address] });
    await failedSubmissions(owner, 1);
  } catch (err) {
    await owner.target.close();
    throw err;
  }
  // Written within a second of the attempts (the delivery process's health tally), every attempt counted.
  const attempts = await ctx.platform
    .db('delivery_attempts as a')
    .join('deliveries as d', 'd.id', 'a.delivery_id')
    .where('d.webhook_id', owner.hook.id)
    .count<{ n: string }[]>('* as n');
  const { failing_since } = await eventually(async () => {
    const row = await ctx.platform.db('webhooks').where({ id: owner.hook.id }).first();
    return row.failing_since && row.consecutive_failures === Number(attempts[0]?.n) && row;
  });
  const config = {
    ...ctx.platform.config,
    WEBHOOK_FAILURE_ALERT_AFTER: after.alert,
    WEBHOOK_DISABLE_AFTER: after.disable,
  };
  const clock = { at: failing_since.getTime(), now: () => new Date(clock.at) };
  const mailed = () => mail.smtp.mails.filter((m) => m.to.includes(address));
  return {
    owner,
    clock,
    mailed,
    subjects: () => Promise.all(mailed().map(async (m) => (await PostalMime.parse(m.raw)).subject)),
    sweep: () => sweepWebhookHealth({ ...ctx.platform, mailer: mail.mailer, config, now: clock.now() }),
  };
}

describe('webhook health: alert and disable, on a clock moved forward', () => {
  const mail = useMail();
  it('alerts the form’s addresses once after an hour of failures, disables after five days, and enabling clears it', async () => {
    const { owner, clock, mailed, sweep } = await failingWebhook(mail, { alert: 3_600_000, disable: 5 * 86_400_000 });
    try {
      clock.at += 59 * 60_000;
      await sweep();
      expect(mailed()).toEqual([]);
      clock.at += 2 * 60_000;
      await sweep();
      await sweep();
      expect(mailed()).toHaveLength(1);
      const alert = await PostalMime.parse(mailed()[0]!.raw);
      expect(alert.subject).toBe('Webhook failing: Test form');
      expect(alert.text).toContain(`The webhook ${owner.hook.id} of the form "Test form" (http://127.0.0.1:`);
      expect(alert.text).toContain('5 failed attempts in a row');
      expect(alert.text).toContain('Last error: receiver answered 500');

      clock.at += 5 * 86_400_000;
      await sweep();
      expect(mailed()).toHaveLength(2);
      expect((await PostalMime.parse(mailed()[1]!.raw)).subject).toBe('Webhook disabled: Test form');
      const disabled = await owner.call('GET', `/v1/webhooks/${owner.hook.id}`);
      expect(disabled.body).toMatchObject({ enabled: false, disabled_reason: 'failing' });

      const enabled = await owner.call('PATCH', `/v1/webhooks/${owner.hook.id}`, { enabled: true });
      expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null });
      expect(enabled.body.health).toMatchObject({ failing_since: null, consecutive_failures: 0 });
      await sweep();
      expect(mailed()).toHaveLength(2);
    } finally {
      await owner.target.close();
    }
  });
});

describe('webhook health: a notice the mail server refused', () => {
  const mail = useMail();
  it('sends an alert and a disabled notice that the mail server refused at the next sweep, once', async () => {
    const { owner, clock, subjects, sweep } = await failingWebhook(mail, { alert: 60_000, disable: 120_000 });
    try {
      clock.at += 61_000;
      mail.smtp.refuse(true);
      await sweep();
      mail.smtp.refuse(false);
      expect(await subjects()).toEqual([]);
      await sweep();
      expect(await subjects()).toEqual(['Webhook failing: Test form']);

      clock.at += 60_000;
      mail.smtp.refuse(true);
      await sweep();
      mail.smtp.refuse(false);
      expect(await subjects()).toEqual(['Webhook failing: Test form']);
      expect((await owner.call('GET', `/v1/webhooks/${owner.hook.id}`)).body).toMatchObject({ enabled: false });
      await sweep();
      await sweep();
      expect(await subjects()).toEqual(['Webhook failing: Test form', 'Webhook disabled: Test form']);
    } finally {
      mail.smtp.refuse(false);
      await owner.target.close();
    }
  });
});

describe('a busy webhook’s health row', () => {
  it('moves its last success at most once a second, and at once on any failure', async () => {
    const owner = await newOwner(ctx);
    // Disabled: the workers leave it alone; its attempts are tallied here.
    const hook = await factories.webhook(ctx.platform, {
      accountId: owner.accountId,
      formId: owner.formId,
      enabled: false,
    });
    const t0 = new Date(Date.UTC(2026, 5, 1, 12));
    const at = (ms: number) => new Date(t0.getTime() + ms);
    // One tally, as a delivery process keeps: each attempt written as the process writes it every second.
    const tally = new HealthTally(ctx.platform.db);
    const attempt = async (ms: number, ok: boolean) => {
      tally.add(hook.id, at(ms), ok);
      await tally.write();
      return ctx.platform.db('webhooks').where({ id: hook.id }).first();
    };
    expect((await attempt(0, true)).last_success_at).toEqual(at(0));
    expect((await attempt(400, true)).last_success_at).toEqual(at(0));
    expect((await attempt(999, true)).last_success_at).toEqual(at(0));
    expect((await attempt(1000, true)).last_success_at).toEqual(at(1000));
    expect(await attempt(1100, false)).toMatchObject({ consecutive_failures: 1, last_failure_at: at(1100) });
    expect(await attempt(1200, true)).toMatchObject({ consecutive_failures: 0, last_success_at: at(1200) });

    // Attempts that end out of order within one second's tally: only failures started after the last success count.
    tally.add(hook.id, at(2000), false);
    tally.add(hook.id, at(2100), false);
    tally.add(hook.id, at(2050), true);
    tally.add(hook.id, at(2200), false);
    expect(await attempt(2150, false)).toMatchObject({
      consecutive_failures: 3,
      failing_since: at(2100),
      last_success_at: at(2050),
      last_failure_at: at(2200),
    });
    // The next second's failures go on with the streak and keep its start.
    expect(await attempt(3000, false)).toMatchObject({ consecutive_failures: 4, failing_since: at(2100) });
    // A failure followed by a success in one tally: the streak ends, and the failure is still the last one seen.
    tally.add(hook.id, at(3500), false);
    expect(await attempt(3600, true)).toMatchObject({
      consecutive_failures: 0,
      failing_since: null,
      last_failure_at: at(3500),
      last_success_at: at(3600),
    });
    tally.add(hook.id, at(3700), false);
    expect(await attempt(3800, true)).toMatchObject({ last_failure_at: at(3700), last_success_at: at(3800) });
  });
});

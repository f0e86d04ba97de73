import { newId, SUBJECTS } from '@intake/shared/contracts';
import { eventually, smtpSink, type SmtpSink, type TestPlatform } from '@intake/shared/testing';
import {
  formWithWebhook,
  pool,
  post,
  processEnv,
  receiver,
  startService,
  tally,
  faultSuite,
  type ServiceProcess,
} from './harness';

/** Deliveries in the backlog: at 64 attempts at once per process, RECEIVER_DELAY_MS each, several ack deadlines long. */
const DELIVERIES = 1600;
/** Posts to a form that notifies its owner by e-mail (no webhook). */
const MAILS = 300;
/** WEBHOOK_TIMEOUT_MS: the send consumer's ack deadline is twice this (4 s). */
const TIMEOUT_MS = 2000;
const ACK_DEADLINE_S = (2 * TIMEOUT_MS) / 1000;
/** The receiver answers after this long: half the timeout, so no attempt times out even on a loaded machine. */
const RECEIVER_DELAY_MS = 1000;

/** The post each mail is of (its `n` field, which the mail lists), in the order the mails came. */
const mailedSubmissions = (smtp: SmtpSink) => smtp.mails.map((m) => /^n: (\d+)$/m.exec(m.text)?.[1] ?? '?');

type Form = { formId: string; slug: string };

/**
 * The backlog, built while no delivery process runs: every post accepted and its event published;
 * for the webhook form, the fan-out done here in bulk (the rows and messages the fan-out makes, with
 * its message ids), so the send consumer meets the whole backlog at once.
 */
async function buildBacklog(platform: TestPlatform, ingestUrl: string, hooked: Form, mailed: Form) {
  const { db, nats } = platform;
  const answers = await pool(DELIVERIES + MAILS, 16, (i) =>
    post(ingestUrl, i < DELIVERIES ? hooked.slug : mailed.slug, { name: 'backlog', n: String(i) }),
  );
  expect(tally(answers.map((a) => a.status))).toEqual({ 201: DELIVERIES + MAILS });
  await eventually(
    async () => (await nats.jsm.streams.info(nats.names.eventsStream)).state.messages >= DELIVERIES + MAILS,
    { timeoutMs: 30_000, message: 'every event published' },
  );
  const webhook: { id: string } = await db('webhooks').where({ form_id: hooked.formId }).first('id');
  const submissions: { id: string; account_id: string; payload: Record<string, string> }[] = await db('submissions')
    .where({ form_id: hooked.formId })
    .select('id', 'account_id', 'payload');
  const rows = submissions.map((s) => ({
    id: newId('delivery'),
    account_id: s.account_id,
    webhook_id: webhook.id,
    form_id: hooked.formId,
    submission_id: s.id,
    event_type: 'submission.created',
    data: JSON.stringify({ submission_id: s.id, form_id: hooked.formId, payload: s.payload, files: [] }),
  }));
  await db.batchInsert('deliveries', rows, 500);
  const subject = nats.names.subject(SUBJECTS.deliveryRequested);
  await pool(rows.length, 100, (i) => {
    const eventId = `${rows[i]!.id}.initial`;
    const message = { event_id: eventId, delivery_id: rows[i]!.id, trigger: 'schedule' };
    return nats.js.publish(subject, JSON.stringify(message), { msgID: eventId });
  });
}

/** Waits until a consumer of the deliveries stream has nothing pending and nothing awaiting an ack. */
function consumerSettled(platform: TestPlatform, consumer: string, timeoutMs: number, message: string) {
  const { nats } = platform;
  return eventually(
    async () => {
      const info = await nats.jsm.consumers.info(nats.names.deliveriesStream, consumer);
      return info.num_ack_pending === 0 && info.num_pending === 0;
    },
    { timeoutMs, message },
  );
}

/** The form's deliveries and the number of attempts recorded for them. */
async function deliveryRecords(platform: TestPlatform, formId: string) {
  const { db } = platform;
  const deliveries = await db('deliveries').where({ form_id: formId }).select('id', 'attempt_count');
  const attempts = await db('delivery_attempts as a')
    .join('deliveries as d', 'd.id', 'a.delivery_id')
    .where('d.form_id', formId)
    .count({ n: '*' })
    .first();
  return { deliveries, attempts };
}

/**
 * One delivery process takes the backlog; a second one joins once sending has begun, as a replica
 * added to drain a backlog would. Answers the seconds until every delivery was received.
 */
async function drainWithTwoProcesses(
  processes: ServiceProcess[],
  env: Record<string, string>,
  target: Awaited<ReturnType<typeof receiver>>,
): Promise<number> {
  const started = performance.now();
  processes.push(await startService('delivery', env, { ready: true }));
  await eventually(() => target.envelopes.length > 0, { timeoutMs: 30_000, message: 'the first webhook' });
  processes.push(await startService('delivery', env, { ready: true }));
  await eventually(() => target.distinctIds().size >= DELIVERIES, {
    timeoutMs: 150_000,
    intervalMs: 100,
    message: `webhooks for ${DELIVERIES} deliveries (have ${target.distinctIds().size})`,
  });
  return (performance.now() - started) / 1000;
}

/**
 * No duplicate without a crash. A delivery process starts on a backlog of
 * 1,600 `delivery.requested` messages and a second one joins once sending has begun; the backlog
 * takes at least 12.5 s to send (64 attempts at once per process, the receiver answers after 1 s)
 * against an ack deadline of 4 s. The receiver must get exactly
 * one request per delivery: a consumer must not hold messages it cannot finish before their
 * deadline, must keep alive what it holds, and must not send a redelivered copy of an attempt in
 * flight elsewhere. The owner of a second form gets exactly one mail per submission.
 */
describe('fault: a backlog longer than the ack deadline, no process dying', () => {
  const suite = faultSuite();
  const { processes } = suite;

  it('sends exactly one webhook per delivery and one mail per submission', async () => {
    const { platform } = suite;
    const { db } = platform;
    const target = await receiver({ delayMs: RECEIVER_DELAY_MS });
    const smtp = await smtpSink();
    try {
      const hooked = await formWithWebhook(platform, target.url);
      const mailed = await formWithWebhook(platform);
      await db('forms')
        .where({ id: mailed.formId })
        .update({ notify_emails: JSON.stringify(['owner@example.com']) });
      const env = processEnv(platform.config, {
        WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        SMTP_URL: smtp.url,
        // Every slot on the one webhook (a receiver answering in a second counts as slow, held to 8 by default):
        // the backlog is about duplicates when every slot of the process waits, not about sharing them.
        WEBHOOK_ENDPOINT_CONCURRENCY: '64',
      });
      const ingest = await startService('ingest', env);
      processes.push(ingest);

      await buildBacklog(platform, ingest.url, hooked, mailed);
      const drained = await drainWithTwoProcesses(processes, env, target);
      await eventually(
        async () =>
          (await db('deliveries').where({ form_id: hooked.formId, status: 'succeeded' }).count({ n: '*' }).first())
            ?.n == DELIVERIES,
        { timeoutMs: 20_000, message: 'every delivery recorded as succeeded' },
      );
      // Copies redelivered meanwhile have been handled: nothing is left pending.
      await consumerSettled(platform, 'delivery-send', 30_000, 'the send consumer settled');
      const { deliveries, attempts } = await deliveryRecords(platform, hooked.formId);
      console.log(
        `backlog: ${DELIVERIES} deliveries sent by 2 delivery processes in ${drained.toFixed(1)} s (ack deadline ${ACK_DEADLINE_S} s); ` +
          `${target.envelopes.length} webhook requests (${target.envelopes.length - target.distinctIds().size} duplicates), ` +
          `${attempts?.n} attempts recorded`,
      );
      // The backlog really was several ack deadlines long.
      expect(drained).toBeGreaterThan(2 * ACK_DEADLINE_S);
      expect(deliveries).toHaveLength(DELIVERIES);
      expect(target.distinctIds()).toEqual(new Set(deliveries.map((d) => d.id)));
      expect(target.envelopes.length).toBe(DELIVERIES);
      expect(deliveries.filter((d) => d.attempt_count !== 1).length).toBe(0);
      expect(Number(attempts?.n)).toBe(DELIVERIES);

      // Posts DELIVERIES to DELIVERIES + MAILS - 1 went to the mailed form (buildBacklog).
      const mailedIds = new Set(Array.from({ length: MAILS }, (_, i) => String(DELIVERIES + i)));
      await eventually(() => new Set(mailedSubmissions(smtp)).size >= MAILS, {
        timeoutMs: 120_000,
        intervalMs: 100,
        message: `mails for ${MAILS} posts (have ${new Set(mailedSubmissions(smtp)).size})`,
      });
      await consumerSettled(platform, 'delivery-mail', 40_000, 'the mail consumer settled');
      console.log(
        `backlog: ${smtp.mails.length} mails for ${MAILS} submissions (${smtp.mails.length - new Set(mailedSubmissions(smtp)).size} duplicates)`,
      );
      expect(new Set(mailedSubmissions(smtp))).toEqual(mailedIds);
      expect(smtp.mails.length).toBe(MAILS);
    } finally {
      await target.close();
      await smtp.close();
    }
  }, 300_000);
});

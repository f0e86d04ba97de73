import { type Config, type Db, type Logger, type Mail, type Mailer, type SecretBox } from '@intake/shared/base';
import { formAndProject, formProject, toTimestamp } from '@intake/shared/contracts';
import { type Nats } from '@intake/shared/messaging';
import { deliveryRequest, publishTraced } from '@intake/shared/webhooks';
import { startPeriodic, type Worker } from '@intake/shared/runtime';
import {
  disableFailingWebhooks,
  forgetNotice,
  takeDisabledNoticesDue,
  takeQueuedReplays,
  takeWebhooksToAlert,
  type FailingWebhook,
} from '../repositories/webhook-health.repository';
import type { SendSlots } from '../send/slots';
import {
  PARKING_PUMP_MS,
  RECONCILE_MS,
  reconcileDeliveries,
  requeueDueDeliveries,
  requeueDueNotifications,
} from './parking';
import { reconcileSubmissions } from './submission-reconciler';

/** How often the health sweep runs. */
export const HEALTH_SWEEP_MS = 60_000;

/** How often the replay pump runs, and how many replays it sends each time (per process). */
export const REPLAY_PUMP_MS = 1000;
export const REPLAYS_PER_PUMP = 20;

/**
 * The URL as an e-mail may show it: scheme and host only. A chat service's webhook URL is itself
 * the credential (Slack's, Discord's), and a mailbox is no place for it.
 */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}/…`;
  } catch {
    return '(an unreadable URL)';
  }
}

function healthMail(
  webhook: FailingWebhook,
  props: { disabled: boolean; config: Pick<Config, 'PUBLIC_BASE_URL' | 'WEBHOOK_DISABLE_AFTER'> },
): Mail | undefined {
  const to = Array.isArray(webhook.notify_emails)
    ? webhook.notify_emails.filter((a): a is string => typeof a === 'string')
    : [];
  if (to.length === 0) return undefined;
  const hours = (props.config.WEBHOOK_DISABLE_AFTER / 3_600_000).toFixed(0);
  const client = formProject(webhook)?.name;
  const what = props.disabled
    ? 'It has been disabled: new submissions are not sent to it. Fix the endpoint, enable the webhook again, ' +
      'then replay what failed meanwhile.'
    : props.config.WEBHOOK_DISABLE_AFTER > 0
      ? `Deliveries are still retried. If it keeps failing for ${hours} hours in all, it will be disabled.`
      : 'Deliveries are still retried.';
  const text = [
    `The webhook ${webhook.id} of the form "${webhook.form_name}"${client ? ` of ${client}` : ''} ` +
      `(${displayUrl(webhook.url)}) has failed`,
    `without a success since ${toTimestamp(webhook.failing_since)} (${webhook.consecutive_failures} failed attempts in a row).`,
    '',
    `Last error: ${webhook.last_error ?? '(none recorded)'}`,
    '',
    what,
    '',
    `${props.config.PUBLIC_BASE_URL}/console/forms/${webhook.form_id}/webhooks/${webhook.id}`,
    '',
  ].join('\n');
  const subject = `${props.disabled ? 'Webhook disabled' : 'Webhook failing'}: ${formAndProject(webhook.form_name, client)}`;
  return { to, subject: subject.replace(/[\r\n]+/g, ' ').slice(0, 200), text };
}

/**
 * One health sweep: webhooks failing without a success for WEBHOOK_DISABLE_AFTER are disabled
 * (`disabled_reason: failing`) and their forms' addresses told; those failing for
 * WEBHOOK_FAILURE_ALERT_AFTER are alerted once per streak (a success ends the streak). A notice whose
 * mail could not be sent is taken again at the next sweep. `0` turns either off.
 */
export async function sweepWebhookHealth(props: {
  db: Db;
  mailer: Mailer;
  logger: Logger;
  config: Pick<Config, 'PUBLIC_BASE_URL' | 'WEBHOOK_FAILURE_ALERT_AFTER' | 'WEBHOOK_DISABLE_AFTER'>;
  now: Date;
}): Promise<{ alerted: number; disabled: number }> {
  const { db, config, now } = props;
  const at = (ms: number) => new Date(now.getTime() - ms);
  const disabled =
    config.WEBHOOK_DISABLE_AFTER > 0
      ? await disableFailingWebhooks(db, { cutoff: at(config.WEBHOOK_DISABLE_AFTER), now })
      : [];
  for (const webhook of disabled) props.logger.warn({ webhook_id: webhook.id }, 'webhook disabled after failing');
  await tell(props, [...disabled, ...(await takeDisabledNoticesDue(db, now))], 'disabled_notice_at');
  const alerted =
    config.WEBHOOK_FAILURE_ALERT_AFTER > 0
      ? await takeWebhooksToAlert(db, { cutoff: at(config.WEBHOOK_FAILURE_ALERT_AFTER), now })
      : [];
  await tell(props, alerted, 'alerted_at');
  return { alerted: alerted.length, disabled: disabled.length };
}

/** Mails each webhook's notice to its form's addresses; one that cannot be sent is forgotten, to be taken again. */
async function tell(
  props: { db: Db; mailer: Mailer; logger: Logger; config: Parameters<typeof healthMail>[1]['config'] },
  webhooks: FailingWebhook[],
  notice: 'alerted_at' | 'disabled_notice_at',
): Promise<void> {
  for (const webhook of webhooks) {
    const mail = healthMail(webhook, { disabled: notice === 'disabled_notice_at', config: props.config });
    if (!mail) continue;
    try {
      await props.mailer.send(mail);
    } catch (err) {
      props.logger.warn({ err, webhook_id: webhook.id }, 'webhook health mail failed; will retry');
      await forgetNotice(props.db, webhook.id, notice);
    }
  }
}

/**
 * Sends queued replays (POST /v1/webhooks/:id/replay) at a bounded rate: at most REPLAYS_PER_PUMP
 * `delivery.requested` messages per REPLAY_PUMP_MS and process, so a replay of thousands of
 * deliveries after an outage enters the send queue a little at a time and new deliveries keep
 * their place between them.
 */
export function pumpReplays(props: { db: Db; nats: Nats; limit?: number }): Promise<number> {
  return takeQueuedReplays(props.db, props.limit ?? REPLAYS_PER_PUMP, async (ids) => {
    await publishTraced(
      props.nats,
      ids.map((id) => deliveryRequest({ deliveryId: id, trigger: 'replay' })),
    );
  });
}

/** The health sweep, the replay pump, the pump of parked deliveries and due mails, and the reconciler of one delivery process. */
export function startWebhookUpkeep(props: {
  db: Db;
  nats: Nats;
  mailer: Mailer;
  logger: Logger;
  config: Config;
  clock: { now(): Date };
  sendConsumer: string;
  /** The process's send slots, whose broken webhooks' parked deliveries the pump keeps parked but for their probe. */
  slots?: SendSlots;
  /** With the fan-out consumer's durable name: the submission reconciler runs too (it fans out from Postgres). */
  fanOut?: { consumer: string; secrets: SecretBox };
}): Worker[] {
  const afterMs = props.config.RECONCILE_AFTER;
  const { fanOut } = props;
  // A quarter of RECONCILE_AFTER when that is shorter, so a delivery is watched soon after it comes of age.
  const reconcileMs = Math.max(100, Math.min(RECONCILE_MS, afterMs / 4));
  const submissionReconciler = fanOut
    ? [
        startPeriodic({
          intervalMs: reconcileMs,
          logger: props.logger,
          failure: 'submission reconciler failed; will retry',
          task: async () => {
            const step = await reconcileSubmissions({
              ...props,
              secrets: fanOut.secrets,
              fanOutConsumer: fanOut.consumer,
              now: props.clock.now(),
              afterMs,
            });
            if (step.submissions > 0)
              props.logger.warn(
                { submissions: step.submissions, deliveries: step.deliveries, walked: step.walked, afterMs },
                'stored submissions without their webhook deliveries were fanned out again: their events never ' +
                  'reached fan-out (an events stream purged, restored, or bounded and full while fan-out was behind)',
              );
          },
        }),
      ]
    : [];
  return [
    startPeriodic({
      intervalMs: HEALTH_SWEEP_MS,
      logger: props.logger,
      failure: 'webhook health sweep failed; will retry',
      task: () => sweepWebhookHealth({ ...props, now: props.clock.now() }),
    }),
    startPeriodic({
      intervalMs: REPLAY_PUMP_MS,
      logger: props.logger,
      failure: 'replay pump failed; will retry',
      task: () => pumpReplays(props),
    }),
    startPeriodic({
      intervalMs: PARKING_PUMP_MS,
      logger: props.logger,
      failure: 'parked deliveries pump failed; will retry',
      task: async () => {
        await requeueDueDeliveries({ ...props, now: props.clock.now(), recheckMs: afterMs });
        await requeueDueNotifications({ ...props, now: props.clock.now(), recheckMs: afterMs });
      },
    }),
    startPeriodic({
      intervalMs: reconcileMs,
      logger: props.logger,
      failure: 'delivery reconciler failed; will retry',
      task: async () => {
        const step = await reconcileDeliveries({ ...props, now: props.clock.now(), afterMs });
        if (step !== 'backlog' && step.parked > 0)
          props.logger.info(
            { parked: step.parked, afterMs },
            'deliveries still waiting were handed to the parking pump',
          );
      },
    }),
    ...submissionReconciler,
  ];
}

import {
  BatchQueue,
  type Config,
  type Db,
  type Logger,
  type Mailer,
  type SecretBox,
  recordGroupOrEach,
} from '@intake/shared/base';
import {
  EVENT_PAYLOAD_MAX_BYTES,
  SUBJECTS,
  type AutoresponseSettings,
  type NotificationRequested,
  type SubmissionEvent,
} from '@intake/shared/contracts';
import { recordNotification } from '@intake/shared/telemetry';
import { ACK, eventWithPayload, type Nats, type Outcome, type Within } from '@intake/shared/messaging';
import { publishTraced, type TracedMessage } from '@intake/shared/webhooks';
import {
  claimSubmissionNotifications,
  recordNotificationOutcomes,
  storedSubmissions,
  type NotificationOutcome,
} from '../repositories/notification.repository';
import { PARK_AFTER_MS, retryDelayMs } from '../send/deliver';
import { submissionMail } from './notification-mail';
import { consoleReaders, findMailBranding } from '../repositories/mail-branding.repository';

/**
 * Publishes one submission's `delivery.notification` (the fan-out, for a form with addresses) inside
 * a PRODUCER span whose context rides in the NATS headers. Its id is the event's with `.mail`, so a
 * redelivered event's second publish is dropped by the stream; fields that were read from the
 * submission because the event went without them (over `EVENT_PAYLOAD_MAX_BYTES`) go without them
 * again, so the message stays as small as the event was, far below NATS's `max_payload`.
 */
export async function requestNotification(
  nats: Nats,
  mail: { event: SubmissionEvent; to: string[]; autoresponse?: AutoresponseSettings },
): Promise<void> {
  await publishTraced(nats, [notificationRequest(mail)]);
}

/** The `delivery.notification` of a submission's mail (or its autoresponse), for `publishTraced`. */
export function notificationRequest(
  mail: { event: SubmissionEvent; to: string[]; autoresponse?: AutoresponseSettings },
  within?: Within,
): TracedMessage {
  const { event, to } = mail;
  const large = Buffer.byteLength(JSON.stringify(event.payload)) > EVENT_PAYLOAD_MAX_BYTES;
  const message: NotificationRequested = {
    event_id: `${event.event_id}.${mail.autoresponse ? 'autoresponse' : 'mail'}`,
    event: large ? { ...event, payload: {}, payload_omitted: true } : event,
    to,
    ...(mail.autoresponse ? { autoresponse: mail.autoresponse } : {}),
  };
  return {
    subject: SUBJECTS.notificationRequested,
    message,
    attributes: { 'intake.submission_id': event.submission_id },
    within,
  };
}

/** The addresses a form's notification list sends to (what is not an address is left out). */
export function mailRecipients(to: readonly unknown[]): string[] {
  return to.filter((a): a is string => typeof a === 'string' && a.includes('@'));
}

/** Attempts at sending one notification e-mail before it is left `failed`. */
export const MAX_MAIL_ATTEMPTS = 5;

/** How long one send holds its notification (SMTP answers within seconds; a copy handled meanwhile waits). */
export const MAIL_LEASE_MS = 120_000;

/** How many notification e-mails one call sends at once. */
export const MAIL_CONCURRENCY = 8;

export interface NotifyDeps {
  db: Db;
  mailer: Mailer;
  logger: Logger;
  config: Pick<Config, 'PUBLIC_BASE_URL' | 'WEBHOOK_RETRY_SCHEDULE' | 'RECONCILE_AFTER'>;
  secrets: SecretBox;
  now: Date;
  /** Records a send's outcome and ends its lease (default: a statement of its own; the consumer's notificationRecorder shares them). */
  record?(outcome: NotificationOutcome): Promise<void>;
}

/**
 * E-mails received submissions to their forms' notification addresses (`to`, as the form has
 * them; a message to each, see sendOne), once per submission (notifications.dedup_key): one statement claims the sends of all of
 * them, at most MAIL_CONCURRENCY are sent at once, and a refused send is recorded and retried after
 * the ladder's steps. A copy of a message whose mail another process is sending waits for that
 * send's outcome. Answers one outcome per item, in order.
 */
export async function notifySubmissions(
  props: NotifyDeps & { items: { event: SubmissionEvent; to: unknown[] }[] },
): Promise<Outcome[]> {
  const { db, now } = props;
  const record = props.record ?? ((outcome) => recordNotificationOutcomes(db, [outcome]));
  const outcomes: Outcome[] = props.items.map(() => ACK);
  const wanted: { i: number; event: SubmissionEvent; recipients: string[] }[] = [];
  for (const [i, item] of props.items.entries()) {
    const recipients = mailRecipients(item.to);
    if (item.event.status !== 'received' || recipients.length === 0) continue;
    // A payload too large for the message is read from the submission; one deleted meanwhile is not mailed.
    const event = await eventWithPayload(db, item.event);
    if (event) wanted.push({ i, event, recipients });
  }
  const claims = await claimSubmissionNotifications(
    db,
    wanted.map(({ event, recipients }) => ({
      accountId: event.account_id,
      submissionId: event.submission_id,
      recipients,
    })),
    { leaseMs: MAIL_LEASE_MS, recheckMs: props.config.RECONCILE_AFTER, now },
  );
  const sends = wanted.flatMap((w, k) => {
    const claim = claims[k]!;
    if (claim.taken) return [{ ...w, claim }];
    if (!claim.done) outcomes[w.i] = { retryInMs: Math.max(claim.remainingMs, 50) };
    return [];
  });
  await Promise.all(
    Array.from({ length: Math.min(MAIL_CONCURRENCY, sends.length) }, async () => {
      for (let next = sends.shift(); next; next = sends.shift()) {
        const { i, event, recipients, claim } = next;
        outcomes[i] = await sendOne(
          { ...props, record },
          { event, to: recipients, id: claim.id, attemptCount: claim.attemptCount, sentTo: claim.sentTo },
        );
      }
    }),
  );
  return outcomes;
}

/**
 * A failed mail's next attempt, after its step of the webhooks' ladder: a wait of a minute or less stays in JetStream
 * (a nak with that delay; the row is looked at again RECONCILE_AFTER after it, should the message be lost), a longer
 * one leaves it (the message is acknowledged) and waits in Postgres until the pump asks for it (migration 027).
 */
export function mailRetry(
  config: Pick<Config, 'WEBHOOK_RETRY_SCHEDULE' | 'RECONCILE_AFTER'>,
  attempts: number,
  now: Date,
): { lookAgainAt: Date; outcome: Outcome } {
  const delay = retryDelayMs(config.WEBHOOK_RETRY_SCHEDULE, attempts);
  if (delay > PARK_AFTER_MS) return { lookAgainAt: new Date(now.getTime() + delay), outcome: ACK };
  return {
    lookAgainAt: new Date(now.getTime() + delay + config.RECONCILE_AFTER),
    outcome: { retryInMs: delay },
  };
}

/**
 * The outcomes of sends recorded through a BatchQueue: an outcome waits 10 ms for the others that end
 * meanwhile, and those that end while a record is written share the next statement (sends end one at
 * a time, and a statement each was a commit each: 1.4–2.0 ms of Postgres per mail against 0.3 ms).
 * A group that fails is recorded one by one, so a send is never left unrecorded because of another.
 */
export function notificationRecorder(db: Db): (outcome: NotificationOutcome) => Promise<void> {
  const queue = new BatchQueue<NotificationOutcome, void>(
    (group) => recordGroupOrEach(group, (some) => recordNotificationOutcomes(db, some)),
    { maxGroup: 100, maxInFlight: 1, gatherMs: 10 },
  );
  return (outcome) => queue.push(outcome);
}

/**
 * Sends one submission's notification: a message to each recipient an earlier attempt did not reach (`sentTo`), the
 * console's link only to those who can open it. A refused message does not hold back the others; the notification is
 * `sent` once every recipient has had theirs, else retried for the rest (or `failed` after the last attempt).
 */
async function sendOne(
  props: NotifyDeps & { record(outcome: NotificationOutcome): Promise<void> },
  mail: { event: SubmissionEvent; to: string[]; id: string; attemptCount: number; sentTo?: string[] },
): Promise<Outcome> {
  const { event, to, id } = mail;
  const attempts = mail.attemptCount + 1;
  // Deleted or erased since the claim: nothing of it leaves (its row went with it).
  if (!(await storedSubmissions(props.db, [event.submission_id])).has(event.submission_id)) return ACK;
  const sentTo = new Set(mail.sentTo ?? []);
  const refused: string[] = [];
  let failure: unknown;
  try {
    const branding = await findMailBranding(props.db, event.form_id);
    const readers = await consoleReaders(props.db, branding.place, to);
    for (const recipient of to) {
      if (sentTo.has(recipient)) continue;
      const message = submissionMail({
        ...props,
        event,
        to: recipient,
        withLink: readers.has(recipient),
        branding,
      });
      try {
        await props.mailer.send(message);
        sentTo.add(recipient);
      } catch (err) {
        failure ??= err;
        refused.push(`${recipient}: ${String((err as Error).message ?? err)}`);
      }
    }
  } catch (err) {
    failure = err;
    refused.push(String((err as Error).message ?? err));
  }
  if (failure === undefined) {
    await props.record({
      id,
      status: 'sent',
      sentAt: props.now,
      attemptCount: attempts,
      lastError: null,
      sentTo: [...sentTo],
    });
    recordNotification({ outcome: 'sent' });
    return ACK;
  }
  recordNotification({ outcome: 'failed' });
  const final = attempts >= MAX_MAIL_ATTEMPTS;
  const retry = final ? undefined : mailRetry(props.config, attempts, props.now);
  await props.record({
    id,
    status: final ? 'failed' : 'pending',
    attemptCount: attempts,
    lastError: refused.join('; ').slice(0, 500),
    nextAttemptAt: retry?.lookAgainAt,
    sentTo: [...sentTo],
  });
  props.logger.warn(
    { err: failure, submission_id: event.submission_id, attempt: attempts, refused: refused.length },
    final ? 'notification e-mail failed for good' : 'notification e-mail failed; will retry',
  );
  return retry?.outcome ?? ACK;
}

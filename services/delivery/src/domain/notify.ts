import {
  ACK,
  recordNotification,
  type Config,
  type Db,
  type Logger,
  type Mailer,
  type Outcome,
  type SecretBox,
  type SubmissionEvent,
} from '@intake/shared';
import {
  ensureSubmissionNotification,
  findNotifyEmails,
  updateNotification,
} from '../repositories/notification.repository';
import { leaseNotification } from '../repositories/lease.repository';
import { retryDelayMs } from './deliver';
import { submissionMail } from './notification-mail';

/** Attempts at sending one notification e-mail before it is left `failed`. */
export const MAX_MAIL_ATTEMPTS = 5;

/** How long one send holds its notification (SMTP answers within seconds; a copy handled meanwhile waits). */
export const MAIL_LEASE_MS = 120_000;

/**
 * E-mails a received submission to the form's notification addresses, once per submission
 * (notifications.dedup_key). A refused send is recorded and retried after the ladder's steps.
 */
export async function notifySubmission(props: {
  db: Db;
  mailer: Mailer;
  logger: Logger;
  config: Pick<Config, 'PUBLIC_BASE_URL' | 'WEBHOOK_RETRY_SCHEDULE'>;
  secrets: SecretBox;
  event: SubmissionEvent;
  now: Date;
}): Promise<Outcome> {
  const { db, event } = props;
  if (event.status !== 'received') return ACK;
  const to = (await findNotifyEmails(db, event.account_id, event.form_id)).filter(
    (a) => typeof a === 'string' && a.includes('@'),
  );
  if (to.length === 0) return ACK;
  const row = await ensureSubmissionNotification(db, {
    accountId: event.account_id,
    submissionId: event.submission_id,
    recipients: to,
    now: props.now,
  });
  if (row.status === 'sent' || row.status === 'failed') return ACK;
  // One send at a time: a copy of this message handled while another process sends waits for its outcome.
  const lease = await leaseNotification(db, { id: row.id, attemptCount: row.attempt_count, leaseMs: MAIL_LEASE_MS });
  if (!lease.taken) return { retryInMs: Math.max(lease.remainingMs, 50) };
  try {
    await props.mailer.send(
      submissionMail({ event, to, config: props.config, secrets: props.secrets, now: props.now }),
    );
    await updateNotification(db, row.id, {
      status: 'sent',
      sentAt: props.now,
      attemptCount: row.attempt_count + 1,
      lastError: null,
    });
    recordNotification({ outcome: 'sent' });
    return ACK;
  } catch (err) {
    recordNotification({ outcome: 'failed' });
    const attempts = row.attempt_count + 1;
    const final = attempts >= MAX_MAIL_ATTEMPTS;
    const message = String((err as Error).message ?? err).slice(0, 500);
    await updateNotification(db, row.id, {
      status: final ? 'failed' : 'pending',
      attemptCount: attempts,
      lastError: message,
    });
    props.logger.warn(
      { err, submission_id: event.submission_id, attempt: attempts },
      final ? 'notification e-mail failed for good' : 'notification e-mail failed; will retry',
    );
    return final ? ACK : { retryInMs: retryDelayMs(props.config.WEBHOOK_RETRY_SCHEDULE, attempts) };
  }
}

import { type Config, type Db, type Logger, type Mail, type Mailer } from '@intake/shared/base';
import {
  formAndProject,
  readableTime,
  type AutoresponseSettings,
  type SubmissionEvent,
} from '@intake/shared/contracts';
import { recordNotification } from '@intake/shared/telemetry';
import { ACK, eventWithPayload, type Outcome } from '@intake/shared/messaging';
import { claimAutoresponse } from '../repositories/autoresponse.repository';
import { storedSubmissions, type NotificationOutcome } from '../repositories/notification.repository';
import { mailRetry } from './notify';
import { letterHtml } from './mail-html';
import { fillPlaceholders, LINE_BREAKS } from './placeholders';
import { findMailBranding, type MailBranding } from '../repositories/mail-branding.repository';

/** At most one autoresponse per account and mailbox (`mailboxOf`) within this window. */
export const AUTORESPONSE_WINDOW_MS = 10 * 60_000;

/** Field names (compared ignoring case) whose value is the recipient when the form names no `email_field`. */
export const AUTORESPONSE_FIELDS = ['email', 'e-mail', 'email_address', '_replyto'] as const;
const DEFAULT_FIELDS = new Set<string>(AUTORESPONSE_FIELDS);

/** One e-mail address and nothing else (the WHATWG form address, ASCII): no list, no display name, no comment. */
const ONE_ADDRESS =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/**
 * The recipient: the value of `emailField`, or of the first field named like an e-mail field, when
 * that value is exactly one address; otherwise none (a value that is not one address is never
 * mailed, and other fields are not searched for one).
 */
export function autoresponseRecipient(payload: Record<string, string>, emailField?: string): string | undefined {
  const value =
    emailField !== undefined
      ? payload[emailField]
      : Object.entries(payload).find(([name]) => DEFAULT_FIELDS.has(name.toLowerCase()))?.[1];
  if (typeof value !== 'string') return undefined;
  const candidate = value.trim();
  return candidate.length <= 254 && ONE_ADDRESS.test(candidate) ? candidate : undefined;
}

/**
 * The autoresponse mail of one submission to `to`, as text and as HTML (the same words, escaped), from the branding's
 * `fromName`; `{{form}}` and `{{project}}` name the form and its client, `{{received_at}}` the time in the form's zone.
 * Marked `Auto-Submitted: auto-replied` (RFC 3834), so the visitor's own responder does not answer it.
 */
export function autoresponseMail(
  settings: AutoresponseSettings,
  event: SubmissionEvent,
  to: string,
  branding: Pick<MailBranding, 'fromName' | 'project' | 'timeZone'> = {},
): Mail {
  const { fromName, project } = branding;
  const receivedAt = readableTime(new Date(event.received_at), branding.timeZone ?? 'UTC');
  const names = { form: event.form_name, project, received_at: receivedAt };
  const subject =
    fillPlaceholders(settings.subject, event.payload, true, names).slice(0, 250) ||
    formAndProject(event.form_name, project).replace(LINE_BREAKS, ' ').slice(0, 250);
  const text = fillPlaceholders(settings.text, event.payload, false, names);
  return {
    to: [to],
    subject,
    text,
    html: letterHtml(subject, text),
    autoSubmitted: 'auto-replied',
    ...(settings.reply_to ? { replyTo: settings.reply_to } : {}),
    ...(fromName ? { fromName } : {}),
  };
}

export interface AutorespondDeps {
  db: Db;
  mailer: Mailer;
  logger: Logger;
  config: Pick<Config, 'WEBHOOK_RETRY_SCHEDULE' | 'RECONCILE_AFTER'>;
  now: Date;
  leaseMs: number;
  maxAttempts: number;
  record(outcome: NotificationOutcome): Promise<void>;
}

/**
 * Sends one submission's autoresponse through the notification pipeline: claimed once per
 * submission (a redelivered or rescued-again submission finds its row), only for a `received`
 * submission still stored, skipped without an address or within the recipient's window, and a
 * refused send retried on the webhook ladder like the owner's mail.
 */
export async function autorespond(
  deps: AutorespondDeps,
  item: { event: SubmissionEvent; settings: AutoresponseSettings },
): Promise<Outcome> {
  if (item.event.status !== 'received' || !item.settings.enabled) return ACK;
  const event = await eventWithPayload(deps.db, item.event);
  if (!event) return ACK;
  // A `_replyto` control field left the payload for the directions: it still names the visitor's address.
  const replyTo = event.directions?.reply_to;
  const to = autoresponseRecipient(
    replyTo ? { ...event.payload, _replyto: replyTo } : event.payload,
    item.settings.email_field,
  );
  const claim = await claimAutoresponse(
    deps.db,
    { accountId: event.account_id, formId: event.form_id, submissionId: event.submission_id, to },
    {
      leaseMs: deps.leaseMs,
      recheckMs: deps.config.RECONCILE_AFTER,
      windowMs: AUTORESPONSE_WINDOW_MS,
      now: deps.now,
    },
  );
  if (!claim.taken) return claim.done ? ACK : { retryInMs: Math.max(claim.remainingMs, 50) };
  if (!to) return ACK; // a claim is never taken without an address: the row was skipped
  // Deleted or erased since the claim: nothing of it leaves (its row went with it).
  if (!(await storedSubmissions(deps.db, [event.submission_id])).has(event.submission_id)) return ACK;
  const attempts = claim.attemptCount + 1;
  try {
    const branding = await findMailBranding(deps.db, event.form_id);
    await deps.mailer.send(autoresponseMail(item.settings, event, to, branding));
  } catch (err) {
    recordNotification({ outcome: 'failed' });
    const final = attempts >= deps.maxAttempts;
    const message = String((err as Error).message ?? err).slice(0, 500);
    const retry = final ? undefined : mailRetry(deps.config, attempts, deps.now);
    await deps.record({
      id: claim.id,
      status: final ? 'failed' : 'pending',
      attemptCount: attempts,
      lastError: message,
      nextAttemptAt: retry?.lookAgainAt,
    });
    deps.logger.warn({ err, submission_id: event.submission_id, attempt: attempts }, 'autoresponse failed');
    return retry?.outcome ?? ACK;
  }
  await deps.record({ id: claim.id, status: 'sent', sentAt: deps.now, attemptCount: attempts, lastError: null });
  recordNotification({ outcome: 'sent' });
  return ACK;
}

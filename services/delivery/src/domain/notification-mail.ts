import { type Config, type Mail, type SecretBox } from '@intake/shared/base';
import { formAndProject, isReplyAddress, readableTime, type SubmissionEvent } from '@intake/shared/contracts';
import { fileDownloadUrl } from '@intake/shared/http';
import { fillPlaceholders, LINE_BREAKS } from './placeholders';
import { notificationHtml } from './mail-html';
import type { MailBranding } from '../repositories/mail-branding.repository';

/** Field names (compared ignoring case) whose value becomes the notification's Reply-To (docs/decisions/mail.md#notification-e-mail). */
export const REPLY_TO_FIELDS = [
  'email',
  'e-mail',
  'email_address',
  'emailaddress',
  'e-mail_address',
  'e-mailaddress',
  'reply_to',
  'replyto',
  '_reply_to',
  'your_email',
  'youremail',
] as const;
const EMAIL_FIELD = new Set<string>(REPLY_TO_FIELDS);

/**
 * The submitter's address for Reply-To when the post gave none in `_replyto`: the first field named like an e-mail
 * field whose value looks like one address.
 */
export function replyToOf(payload: Record<string, string>): string | undefined {
  for (const [name, value] of Object.entries(payload)) {
    const candidate = value.trim();
    if (EMAIL_FIELD.has(name.toLowerCase()) && isReplyAddress(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The notification e-mail of one received submission to one recipient (each gets a message of their own, so no one
 * sees whom else a client's mail goes to): every field, or the owner's text with its placeholders filled and nothing
 * of Intake's above it; the files with signed download links; and a link to the submission in the console only for a
 * recipient who can open it (`withLink`: `consoleReaders`). As text and as HTML (every value escaped). Intake's own
 * body says when it arrived in the form's time zone. Its subject is the post's `_subject`, else the owner's, else
 * Intake's, which names the form with its client (`branding.project`).
 */
export function submissionMail(props: {
  event: SubmissionEvent;
  to: string;
  withLink: boolean;
  config: Pick<Config, 'PUBLIC_BASE_URL'>;
  secrets: SecretBox;
  now: Date;
  branding?: MailBranding;
}): Mail {
  const { event, branding = {} } = props;
  const { template } = branding;
  const fields = Object.entries(event.payload).map(
    ([name, value]) => `${name}: ${value.includes('\n') ? `\n  ${value.split('\n').join('\n  ')}` : value}`,
  );
  const files = event.files.map((f) => ({
    ...f,
    url: fileDownloadUrl({ config: props.config, secrets: props.secrets, fileId: f.id, now: props.now }),
  }));
  const receivedAt = readableTime(new Date(event.received_at), branding.timeZone ?? 'UTC');
  const names = { form: event.form_name, project: branding.project, received_at: receivedAt };
  const body = template?.text === undefined ? undefined : fillPlaceholders(template.text, event.payload, false, names);
  const href = `${props.config.PUBLIC_BASE_URL}/console/submissions/${encodeURIComponent(event.submission_id)}`;
  const link = props.withLink ? { href, label: 'Open it in the console' } : undefined;
  const title = `New submission to "${event.form_name}"${branding.project ? ` — ${branding.project}` : ''}`.replace(
    LINE_BREAKS,
    ' ',
  );
  // Intake's own heading only above Intake's own body: the owner's text is the whole message.
  const heading = body === undefined ? { title, received: `Received ${receivedAt}` } : undefined;
  const text = [
    ...(heading ? [heading.title, heading.received, ''] : []),
    ...(body !== undefined ? [body] : fields.length ? fields : ['(no fields)']),
    ...(files.length
      ? [
          '',
          'Files (links expire in 7 days):',
          ...files.map((f) => `- ${f.filename} (${f.field}, ${f.size} bytes): ${f.url}`),
        ]
      : []),
    ...(link ? ['', `${link.label}: ${link.href}`] : []),
    '',
  ].join('\n');
  const ownSubject =
    template?.subject === undefined ? '' : fillPlaceholders(template.subject, event.payload, true, names);
  const subject = (
    event.directions?.subject ??
    (ownSubject || `New submission: ${formAndProject(event.form_name, branding.project)}`)
  )
    .replace(LINE_BREAKS, ' ')
    .slice(0, 250);
  return {
    to: [props.to],
    // The post's `_subject` and `_replyto` control fields, when it had them (ingest checked both).
    subject,
    text,
    html: notificationHtml({
      title: subject,
      heading,
      text: body,
      fields: Object.entries(event.payload).map(([name, value]) => ({ name, value })),
      files,
      link,
    }),
    replyTo: event.directions?.reply_to ?? replyToOf(event.payload),
    autoSubmitted: 'auto-generated',
    ...(branding.fromName ? { fromName: branding.fromName } : {}),
  };
}

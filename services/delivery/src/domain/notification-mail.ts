import { type Config, type Mail, type SecretBox } from '@intake/shared/base';
import { formAndProject, isReplyAddress, type SubmissionEvent } from '@intake/shared/contracts';
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
 * The notification e-mail of one received submission: every field (or the owner's text, its placeholders filled), the
 * files with signed download links, and a link to the submission in the console; as text and as HTML (every value
 * escaped). Its subject is the post's `_subject`, else the owner's, else Intake's. The form is named with its client
 * (`branding.project`) in Intake's subject and in the body.
 */
export function submissionMail(props: {
  event: SubmissionEvent;
  to: string[];
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
  const names = { form: event.form_name, project: branding.project };
  const body = template?.text === undefined ? undefined : fillPlaceholders(template.text, event.payload, false, names);
  const link = `${props.config.PUBLIC_BASE_URL}/console/submissions/${encodeURIComponent(event.submission_id)}`;
  const title = `New submission to "${event.form_name}"${branding.project ? ` — ${branding.project}` : ''}`.replace(
    LINE_BREAKS,
    ' ',
  );
  const received = `Received at ${event.received_at} (submission ${event.submission_id})`;
  const text = [
    title,
    received,
    '',
    ...(body !== undefined ? [body] : fields.length ? fields : ['(no fields)']),
    ...(files.length
      ? [
          '',
          'Files (links expire in 7 days):',
          ...files.map((f) => `- ${f.filename} (${f.field}, ${f.size} bytes): ${f.url}`),
        ]
      : []),
    '',
    `Open it in the console: ${link}`,
    '',
  ].join('\n');
  const ownSubject =
    template?.subject === undefined ? '' : fillPlaceholders(template.subject, event.payload, true, names);
  return {
    to: props.to,
    // The post's `_subject` and `_replyto` control fields, when it had them (ingest checked both).
    subject: (
      event.directions?.subject ??
      (ownSubject || `New submission: ${formAndProject(event.form_name, branding.project)}`)
    )
      .replace(LINE_BREAKS, ' ')
      .slice(0, 250),
    text,
    html: notificationHtml({
      title,
      received,
      text: body,
      fields: Object.entries(event.payload).map(([name, value]) => ({ name, value })),
      files,
      link: { href: link, label: 'Open it in the console' },
    }),
    replyTo: event.directions?.reply_to ?? replyToOf(event.payload),
    ...(branding.fromName ? { fromName: branding.fromName } : {}),
  };
}

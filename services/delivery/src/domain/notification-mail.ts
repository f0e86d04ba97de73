import {
  fileDownloadUrl,
  isReplyAddress,
  type Config,
  type Mail,
  type SecretBox,
  type SubmissionEvent,
} from '@intake/shared';

/** Field names (compared ignoring case) whose value becomes the notification's Reply-To (docs/decisions.md, notification e-mail). */
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
 * The notification e-mail of one received submission: every field, the files with signed download links, and a link
 * to the submission in the console.
 */
export function submissionMail(props: {
  event: SubmissionEvent;
  to: string[];
  config: Pick<Config, 'PUBLIC_BASE_URL'>;
  secrets: SecretBox;
  now: Date;
}): Mail {
  const { event } = props;
  const fields = Object.entries(event.payload).map(
    ([name, value]) => `${name}: ${value.includes('\n') ? `\n  ${value.split('\n').join('\n  ')}` : value}`,
  );
  const files = event.files.map(
    (f) =>
      `- ${f.filename} (${f.field}, ${f.size} bytes): ` +
      `${fileDownloadUrl({ config: props.config, secrets: props.secrets, fileId: f.id, now: props.now })}`,
  );
  const text = [
    `New submission to "${event.form_name}"`,
    `Received at ${event.received_at} (submission ${event.submission_id})`,
    '',
    ...(fields.length ? fields : ['(no fields)']),
    ...(files.length ? ['', 'Files (links expire in 7 days):', ...files] : []),
    '',
    `Open it in the console: ${props.config.PUBLIC_BASE_URL}/console/submissions/${encodeURIComponent(event.submission_id)}`,
    '',
  ].join('\n');
  return {
    to: props.to,
    // The post's `_subject` and `_replyto` control fields, when it had them (ingest checked both).
    subject: (event.directions?.subject ?? `New submission: ${event.form_name}`).replace(/[\r\n]+/g, ' '),
    text,
    replyTo: event.directions?.reply_to ?? replyToOf(event.payload),
  };
}

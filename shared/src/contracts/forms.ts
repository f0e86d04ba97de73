import { Type, type Static } from '@sinclair/typebox';

/** A form accepts posts only when `live`. */
export const FormStatus = Type.Union([Type.Literal('live'), Type.Literal('paused'), Type.Literal('draft')]);
export type FormStatus = Static<typeof FormStatus>;

/** The bot-challenge providers a form may use (they share one siteverify protocol). */
export const ChallengeProvider = Type.Union([
  Type.Literal('turnstile'),
  Type.Literal('hcaptcha'),
  Type.Literal('recaptcha'),
]);
export type ChallengeProvider = Static<typeof ChallengeProvider>;

/** What a mail template's text may hold. */
const PLACEHOLDERS =
  'plain text; `{{field name}}` placeholders, and `{{form}}` and `{{project}}` for the form’s name and its ' +
  'project’s (empty in the default project) unless a field has that name';

/**
 * A form's autoresponse: the confirmation mailed to whoever filled the form in. `subject` and
 * `text` may name fields as `{{field name}}` (filled as plain text), the form as `{{form}}` and its
 * client as `{{project}}`; the recipient is the value of `email_field`, or of the first field named
 * `email`, `e-mail`, `email_address` or `_replyto`.
 */
export const AutoresponseSettings = Type.Object(
  {
    enabled: Type.Boolean(),
    subject: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\r\\n]*$', description: 'one line' }),
    text: Type.String({ minLength: 1, maxLength: 10_000, description: PLACEHOLDERS }),
    // A pattern, not `format: email`: the delivery service checks messages with TypeBox, which knows no formats.
    reply_to: Type.Optional(
      Type.String({
        pattern: '^[^\\s@<>,;"()]+@[^\\s@<>,;"()]+\\.[^\\s@<>,;"()]+$',
        maxLength: 320,
        description: 'Reply-To of the mail',
      }),
    ),
    email_field: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'the field holding the recipient’s address' }),
    ),
  },
  { additionalProperties: false },
);
export type AutoresponseSettings = Static<typeof AutoresponseSettings>;

/**
 * The display name of a form's mails (the address stays MAIL_FROM): one line, no characters that end a name, and
 * nothing a mail client would turn into another address or show reordered: no `=?` (an RFC 2047 encoded-word, which
 * clients decode, `=?utf-8?B?PGV2aWxAeC55ej4=?=` to `<evil@x.yz>`), no C1 controls (U+0080–U+009F) and no bidi
 * marks, embeddings, overrides or isolates (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069).
 */
export const MailFromName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^(?!.*=\\?)[^\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069<>"@\\\\]+$',
  description:
    'the display name of the form’s notification, autoresponse and digest mails; the address stays MAIL_FROM. ' +
    'Unset: the name of the form’s project (not the default project’s) when it fits these rules, else MAIL_FROM’s',
});

/**
 * The owner's notification: `subject` and `text` may name fields as `{{field name}}` (filled as plain text, as the
 * autoresponse's), and `{{form}}` and `{{project}}`; either left out keeps Intake's own. The text replaces the list of fields; files and the link to the
 * submission follow it.
 */
export const NotificationTemplate = Type.Object(
  {
    subject: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\r\\n]*$', description: 'one line' }),
    ),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000, description: PLACEHOLDERS })),
  },
  { additionalProperties: false },
);
export type NotificationTemplate = Static<typeof NotificationTemplate>;

/** `each`: a mail per received submission; `daily`: one digest a day of what was received. */
export const NotificationSchedule = Type.Union([Type.Literal('each'), Type.Literal('daily')]);
export type NotificationSchedule = Static<typeof NotificationSchedule>;

/** A page a visitor's browser is shown: the owner's title and message (plain text), either left out for Intake's own. */
const VisitorPage = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\r\\n]*$' })),
    message: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false },
);

/** The pages after a browser's plain form post: the thank-you page, and the page of a refused post. */
export const VisitorPages = Type.Object(
  { thank_you: Type.Optional(VisitorPage), refused: Type.Optional(VisitorPage) },
  { additionalProperties: false },
);
export type VisitorPages = Static<typeof VisitorPages>;

/**
 * The project a form is named with (docs/decisions/projects.md#the-client-named-with-its-form): its project, unless
 * that is the account's default project, where a form made without a project goes and which names no client. Null: the
 * form is named alone, as it was before projects.
 */
export const FormProject = Type.Union(
  [Type.Object({ id: Type.String({ description: '`prj_...`' }), name: Type.String() }), Type.Null()],
  {
    description:
      'the client the form belongs to: its project, or null when the form is in the account’s default project ' +
      '(where forms made without a project go)',
  },
);
export type FormProject = Static<typeof FormProject>;

/** A form's project as a query reads it (from `forms.project_id` joined to `projects`). */
export interface ProjectColumns {
  project_id: string | null;
  project_name: string | null;
  project_is_default: boolean | null;
}

/** The project a form is named with, from its project's columns: null for the default project or none. */
export function formProject(row: ProjectColumns): FormProject {
  return row.project_id && row.project_name !== null && row.project_is_default === false
    ? { id: row.project_id, name: row.project_name }
    : null;
}

/** A form's name with its client's, as mails, messages and file names word it: `Contact — Acme Dental`. */
export function formAndProject(formName: string, project: FormProject | string | undefined): string {
  const client = typeof project === 'string' ? project : project?.name;
  return client ? `${formName} — ${client}` : formName;
}

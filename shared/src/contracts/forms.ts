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

/**
 * A form's autoresponse: the confirmation mailed to whoever filled the form in. `subject` and
 * `text` may name fields as `{{field name}}` (filled as plain text); the recipient is the value of
 * `email_field`, or of the first field named `email`, `e-mail`, `email_address` or `_replyto`.
 */
export const AutoresponseSettings = Type.Object(
  {
    enabled: Type.Boolean(),
    subject: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\r\\n]*$', description: 'one line' }),
    text: Type.String({ minLength: 1, maxLength: 10_000, description: 'plain text; `{{field name}}` placeholders' }),
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

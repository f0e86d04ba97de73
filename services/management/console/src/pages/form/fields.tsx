import { Field, TextField } from '../../components/ui';
import type { Form } from '../../api-types';

type Provider = NonNullable<Form['bot_challenge']>['provider'];

/** What the editor's controls hold: a form's settings as text, or the defaults of a new form. */
export function initialValues(form?: Form) {
  return {
    name: form?.name ?? '',
    slug: form?.slug ?? '',
    status: form?.status ?? 'live',
    honeypot: form?.honeypot_field ?? '_gotcha',
    provider: (form?.bot_challenge?.provider ?? '') as Provider | '',
    secret: '',
    emails: (form?.notify_emails ?? []).join('\n'),
    redirect: form?.redirect_url ?? '',
    origins: (form?.allowed_origins ?? []).join('\n'),
  };
}
export type Values = ReturnType<typeof initialValues>;

/** The editor's values and a setter per control. */
export type Editing = { values: Values; set<K extends keyof Values>(name: K): (value: Values[K]) => void };

/** Name, slug, status and the honeypot field. */
export function IdentityFields({ values, set }: Editing) {
  return (
    <>
      <TextField id="f-name" label="Name" required maxLength={200} value={values.name} onValue={set('name')} />
      <TextField
        id="f-slug"
        label="Slug"
        help="Lower-case letters, digits and hyphens; made from the name when empty. It is part of the ingest URL."
        maxLength={64}
        pattern="[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
        value={values.slug}
        onValue={set('slug')}
      />
      <Field id="f-status" label="Status">
        <select
          id="f-status"
          value={values.status}
          onChange={(e) => set('status')(e.currentTarget.value as Values['status'])}
        >
          <option value="live">live — accepts posts</option>
          <option value="paused">paused</option>
          <option value="draft">draft</option>
        </select>
      </Field>
      <TextField
        id="f-honeypot"
        label="Honeypot field"
        help="A hidden field people never fill; posts that fill it are kept as spam."
        required
        maxLength={100}
        value={values.honeypot}
        onValue={set('honeypot')}
      />
    </>
  );
}

/** The bot-challenge provider and its secret (write-only: `keepsSecret` when the form already has one). */
export function BotChallengeFields({ values, set, keepsSecret }: Editing & { keepsSecret: boolean }) {
  return (
    <fieldset>
      <legend>Bot challenge</legend>
      <Field id="f-provider" label="Provider">
        <select
          id="f-provider"
          value={values.provider}
          onChange={(e) => set('provider')(e.currentTarget.value as Values['provider'])}
        >
          <option value="">none</option>
          <option value="turnstile">Cloudflare Turnstile</option>
          <option value="hcaptcha">hCaptcha</option>
          <option value="recaptcha">reCAPTCHA</option>
        </select>
      </Field>
      {values.provider && (
        <TextField
          id="f-secret"
          label="Provider secret key"
          help={
            <>Stored encrypted and never shown again. {keepsSecret ? 'Leave empty to keep the current one.' : ''}</>
          }
          type="password"
          autocomplete="off"
          value={values.secret}
          onValue={set('secret')}
        />
      )}
    </fieldset>
  );
}

/** Where submissions go besides the inbox, and which websites may post. */
export function DeliveryFields({ values, set }: Editing) {
  return (
    <>
      <TextField
        id="f-emails"
        label="Notify e-mails"
        help="One address per line; each gets an e-mail per submission."
        rows={2}
        value={values.emails}
        onValue={set('emails')}
      />
      <TextField
        id="f-redirect"
        label="Redirect URL"
        help="Where a browser goes after posting the HTML form; empty shows a thank-you page."
        type="url"
        placeholder="https://example.com/thanks"
        value={values.redirect}
        onValue={set('redirect')}
      />
      <TextField
        id="f-origins"
        label="Allowed origins"
        help="One origin per line; browser posts from other websites are refused. Empty: any website."
        rows={2}
        placeholder="https://example.com"
        value={values.origins}
        onValue={set('origins')}
      />
    </>
  );
}

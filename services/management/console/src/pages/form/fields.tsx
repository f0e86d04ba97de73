import { Field, TextField, describedBy } from '../../components/ui';
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

/** The API's name of each setting the editor shows, so an error the API reports is shown at its field. */
export const API_FIELDS = [
  'name',
  'slug',
  'status',
  'honeypot_field',
  'bot_challenge',
  'notify_emails',
  'redirect_url',
  'allowed_origins',
];

/** The editor's values, a setter per control, and the errors to show at the fields (by API name). */
export type Editing = {
  values: Values;
  set<K extends keyof Values>(name: K): (value: Values[K]) => void;
  errors: Record<string, string>;
};

/**
 * The slug's pattern. Browsers compile `pattern` with the `v` flag, where a hyphen in a class must be escaped;
 * unescaped, the pattern is invalid and silently never checked.
 */
export const SLUG_PATTERN = '[a-z0-9](?:[a-z0-9\\-]*[a-z0-9])?';

/** Name, slug (with a warning when an existing form's slug changes), status and the honeypot field. */
export function IdentityFields({ values, set, errors, savedSlug }: Editing & { savedSlug?: string }) {
  const slug = values.slug.trim();
  const slugChanges = savedSlug !== undefined && slug !== '' && slug !== savedSlug;
  return (
    <>
      <TextField
        id="f-name"
        label="Name"
        required
        maxLength={200}
        value={values.name}
        onValue={set('name')}
        error={errors['name']}
      />
      <TextField
        id="f-slug"
        label="Slug"
        help={
          slugChanges
            ? `Changing the slug changes the ingest URL: websites that post to /v1/f/${savedSlug} will get “not found” until you update them.`
            : 'Lower-case letters, digits and hyphens; made from the name when empty. It is part of the ingest URL.'
        }
        maxLength={64}
        pattern={SLUG_PATTERN}
        title="Lower-case letters, digits and hyphens, starting and ending with a letter or digit"
        value={values.slug}
        onValue={set('slug')}
        error={errors['slug']}
      />
      <Field id="f-status" label="Status" error={errors['status']}>
        <select
          id="f-status"
          value={values.status}
          aria-describedby={describedBy('f-status', false, Boolean(errors['status']))}
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
        error={errors['honeypot_field']}
      />
    </>
  );
}

/** The bot-challenge provider and its secret (write-only: `keepsSecret` when the form already has one). */
export function BotChallengeFields({ values, set, errors, keepsSecret }: Editing & { keepsSecret: boolean }) {
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
          error={errors['bot_challenge']}
        />
      )}
    </fieldset>
  );
}

/** Where submissions go besides the inbox, and which websites may post. */
export function DeliveryFields({ values, set, errors }: Editing) {
  return (
    <>
      <TextField
        id="f-emails"
        label="Notify e-mails"
        help="One address per line; each gets an e-mail per submission."
        rows={2}
        value={values.emails}
        onValue={set('emails')}
        error={errors['notify_emails']}
      />
      <TextField
        id="f-redirect"
        label="Redirect URL"
        help="Where a browser goes after posting the HTML form; empty shows a thank-you page."
        type="url"
        placeholder="https://example.com/thanks"
        value={values.redirect}
        onValue={set('redirect')}
        error={errors['redirect_url']}
      />
      <TextField
        id="f-origins"
        label="Allowed origins"
        help="One origin per line; browser posts from other websites are refused. Empty: any website."
        rows={2}
        placeholder="https://example.com"
        value={values.origins}
        onValue={set('origins')}
        error={errors['allowed_origins']}
      />
    </>
  );
}

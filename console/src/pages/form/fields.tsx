import type { ComponentChildren } from 'preact';
import { SelectField, TextField } from '../../components/ui';
import { ProjectSelect } from '../../components/projects';
import type { FormSettings, Project } from '../../api-types';
import type { Form } from '../../api-types';
import { inheritNote, withNote, type Inheritance } from './inherited';

type Provider = NonNullable<Form['bot_challenge']>['provider'];
type Template = NonNullable<FormSettings['template']>;

/** What the editor's controls hold: a form's settings as text, or the defaults of a new form. */
export function initialValues(form?: Form, project = '') {
  return {
    name: form?.name ?? '',
    project: form?.project_id ?? project,
    slug: form?.slug ?? '',
    status: form?.status ?? 'live',
    honeypot: form?.honeypot_field ?? '_gotcha',
    provider: (form?.bot_challenge?.provider ?? '') as Provider | '',
    secret: '',
    emails: (form?.notify_emails ?? []).join('\n'),
    redirect: form?.redirect_url ?? '',
    origins: (form?.allowed_origins ?? []).join('\n'),
    template: '' as Template | '',
  };
}
export type Values = ReturnType<typeof initialValues>;

/** The API's name of each setting the editor shows, so an error the API reports is shown at its field. */
const API_NAMES = {
  name: 'name',
  project: 'project_id',
  slug: 'slug',
  status: 'status',
  honeypot: 'honeypot_field',
  provider: 'bot_challenge',
  secret: 'bot_challenge',
  emails: 'notify_emails',
  redirect: 'redirect_url',
  origins: 'allowed_origins',
  template: 'template',
} satisfies Record<keyof Values, string>;
export const API_FIELDS = [...new Set(Object.values(API_NAMES))];

/** The editor's values, a setter per control, and the errors to show at the fields (by API name). */
export type Editing = {
  values: Values;
  set<K extends keyof Values>(name: K): (value: Values[K]) => void;
  errors: Record<string, string>;
};

/** A control's value, its setter, and the error the API reported for its setting: a field's binding. */
const bind = <K extends keyof Values>({ values, set, errors }: Editing, name: K) => ({
  value: values[name],
  onValue: set(name),
  error: errors[API_NAMES[name]],
});

/**
 * The slug's pattern. Browsers compile `pattern` with the `v` flag, where a hyphen in a class must be escaped;
 * unescaped, the pattern is invalid and silently never checked.
 */
export const SLUG_PATTERN = '[a-z0-9](?:[a-z0-9\\-]*[a-z0-9])?';

const STATUSES: [Form['status'], string][] = [
  ['live', 'live — accepts posts'],
  ['paused', 'paused'],
  ['draft', 'draft'],
];

const PROVIDERS: [Provider | '', string][] = [
  ['', 'none'],
  ['turnstile', 'Cloudflare Turnstile'],
  ['hcaptcha', 'hCaptcha'],
  ['recaptcha', 'reCAPTCHA'],
];

/** Name, slug (with a warning when an existing form's slug changes), status and the honeypot field. */
export function IdentityFields(editing: Editing & { savedSlug?: string; projects?: Project[] }) {
  const { values, savedSlug } = editing;
  const slug = values.slug.trim();
  const slugChanges = savedSlug !== undefined && slug !== '' && slug !== savedSlug;
  return (
    <>
      <TextField id="f-name" label="Name" required maxLength={200} {...bind(editing, 'name')} />
      <ProjectSelect
        id="f-project"
        help="Moving a form takes its submissions, webhooks and views along; people limited to projects see it where it is."
        projects={editing.projects}
        {...bind(editing, 'project')}
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
        {...bind(editing, 'slug')}
      />
      <SelectField id="f-status" label="Status" options={STATUSES} {...bind(editing, 'status')} />
      <TextField
        id="f-honeypot"
        label="Honeypot field"
        help="A hidden field people never fill; posts that fill it are kept as spam."
        required
        maxLength={100}
        {...bind(editing, 'honeypot')}
      />
    </>
  );
}

/** The bot-challenge provider and its secret (write-only: `keepsSecret` when the form already has one). */
export function BotChallengeFields(editing: Editing & { keepsSecret: boolean }) {
  const { values, set, keepsSecret } = editing;
  return (
    <fieldset>
      <legend>Bot challenge</legend>
      <SelectField
        id="f-provider"
        label="Provider"
        value={values.provider}
        options={PROVIDERS}
        onValue={set('provider')}
      />
      {values.provider && (
        <TextField
          id="f-secret"
          label="Provider secret key"
          help={
            <>Stored encrypted and never shown again. {keepsSecret ? 'Leave empty to keep the current one.' : ''}</>
          }
          type="password"
          autocomplete="off"
          {...bind(editing, 'secret')}
        />
      )}
    </fieldset>
  );
}

/** A text field's binding: its value, its setter and the error the API reported for it. */
type TextBinding = { value: string; onValue(value: string): void; error?: string | undefined };

/** The addresses notified of each submission: a form's, or (on a project's page) its forms' default. */
export function NotifyEmailsField(props: TextBinding & { help?: ComponentChildren }) {
  return (
    <TextField
      id="f-emails"
      label="Notify e-mails"
      rows={2}
      {...props}
      help={props.help ?? 'One address per line; each gets an e-mail per submission.'}
    />
  );
}

/** The websites that may post: a form's, or (on a project's page) its forms' default. */
export function AllowedOriginsField(props: TextBinding & { help?: ComponentChildren }) {
  return (
    <TextField
      id="f-origins"
      label="Allowed origins"
      rows={2}
      placeholder="https://example.com"
      {...props}
      help={props.help ?? 'One origin per line; browser posts from other websites are refused. Empty: any website.'}
    />
  );
}

/** Where submissions go besides the inbox, and which websites may post (`of`: which the form takes from its project). */
export function DeliveryFields(editing: Editing & { of?: Inheritance | undefined; isNew?: boolean }) {
  const { of, isNew } = editing;
  const fromProject = isNew ? ' Empty: the project’s, if it sets them.' : '';
  return (
    <>
      <NotifyEmailsField
        {...bind(editing, 'emails')}
        help={withNote(
          `One address per line; each gets an e-mail per submission.${fromProject}`,
          inheritNote(of, 'notify_emails', 'notify e-mails'),
        )}
      />
      <TextField
        id="f-redirect"
        label="Redirect URL"
        help="Where a browser goes after posting the HTML form; empty shows a thank-you page."
        type="url"
        placeholder="https://example.com/thanks"
        {...bind(editing, 'redirect')}
      />
      <AllowedOriginsField
        {...bind(editing, 'origins')}
        help={withNote(
          `One origin per line; browser posts from other websites are refused. Empty: any website.${fromProject}`,
          inheritNote(of, 'allowed_origins', 'allowed origins'),
        )}
      />
    </>
  );
}

/** The templates a new form can start from, with the fields its page should send. */
const TEMPLATES: [Template | '', string, string][] = [
  ['', 'Blank', 'No settings filled in.'],
  ['contact', 'Contact', 'Fields name, email and message; email and message required.'],
  ['quote', 'Quote request', 'Fields name, email, phone and details; name, email and details required.'],
  [
    'job_application',
    'Job application',
    'Fields name, email, position, message and a file field cv (the page posts multipart/form-data; files need a plan with uploads); name, email and cv required.',
  ],
  ['newsletter', 'Newsletter sign-up', 'Field email, required; no links allowed.'],
];

/** Which template a new form starts from: required fields, spam rules, the subject and the autoresponse's field. */
export function TemplateField(editing: Editing) {
  const chosen = TEMPLATES.find(([value]) => value === editing.values.template);
  return (
    <SelectField
      id="f-template"
      label="Start from"
      options={TEMPLATES.map(([value, label]) => [value, label] as const)}
      help={`${chosen?.[2] ?? ''} A template fills in spam rules, the notification’s subject and the autoresponse’s address field; you can change each afterwards.`}
      {...bind(editing, 'template')}
    />
  );
}

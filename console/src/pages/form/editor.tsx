import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ApiError, ok } from '../../api';
import type { Form, FormSettings } from '../../api-types';
import { Confirm, SaveRow, useAction } from '../../components/ui';
import { fieldErrors } from '../../components/field-errors';
import { useProjects } from '../../components/projects';
import { useUnsaved } from '../../components/unsaved';
import { confirmAfterNavigation } from '../../flash';
import {
  API_FIELDS,
  BotChallengeFields,
  DeliveryFields,
  IdentityFields,
  initialValues,
  TemplateField,
  type Editing,
  type Values,
} from './fields';
import { differ } from './settings-section';
import { useInheritance, type ProjectDefaults } from './inherited';

/** A list typed one entry per line (or separated by commas). */
export const lines = (text: string) =>
  text
    .split(/[\n,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** Said at the secret field when a newly chosen bot-challenge provider has none. */
const SECRET_NEEDED = new ApiError(422, 'Check the marked fields.', '', [
  { field: 'body/bot_challenge', message: 'Enter the secret key the provider gave you for this site' },
]);

/**
 * The settings to send, or why they cannot be sent (a newly chosen bot-challenge provider needs its secret). A new
 * form is sent no empty address or origin list, so it takes its project's, if the project sets them.
 */
function settingsOf(v: Values, form?: Form): FormSettings | ApiError {
  const body: FormSettings = {
    name: v.name.trim(),
    status: v.status,
    honeypot_field: v.honeypot.trim(),
    notify_emails: lines(v.emails),
    redirect_url: v.redirect.trim() || null,
    allowed_origins: lines(v.origins),
  };
  if (v.slug.trim()) body.slug = v.slug.trim();
  if (!form) {
    if (body.notify_emails?.length === 0) delete body.notify_emails;
    if (body.allowed_origins?.length === 0) delete body.allowed_origins;
    if (v.template) body.template = v.template;
  }
  if (v.project && v.project !== form?.project_id) body.project_id = v.project;
  const providerChanged = v.provider !== (form?.bot_challenge?.provider ?? '');
  if (!v.provider) body.bot_challenge = null;
  else if (v.secret) body.bot_challenge = { provider: v.provider, secret: v.secret };
  else if (providerChanged) return SECRET_NEEDED;
  return body;
}

/** What the editor sends but for a missing secret (which `settingsOf` says when saving). */
const sendable =
  (form?: Form) =>
  (v: Values): FormSettings => {
    const body = settingsOf(v, form);
    return body instanceof ApiError ? { name: v.name } : body;
  };

/**
 * Saves (or creates) and then hands the saved form up; a changed slug is confirmed first. The addresses and origins
 * the form takes from its project stay the project's unless changed (`inheritance`).
 */
function useSave(
  values: Values,
  form: Form | undefined,
  inheritance: { request(values: Values): FormSettings },
  onSaved: (saved: Form) => Promise<void> | void,
) {
  const action = useAction();
  const [confirmSlug, setConfirmSlug] = useState(false);
  const save = async () => {
    setConfirmSlug(false);
    const checked = settingsOf(values, form);
    if (checked instanceof ApiError) return action.setError(checked);
    const body = inheritance.request(values);
    const saved = await action.run(() =>
      form
        ? ok(api.PATCH('/v1/forms/{id}', { params: { path: { id: form.id } }, body }))
        : ok(api.POST('/v1/forms', { body })),
    );
    if (saved) await onSaved(saved);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    const slug = values.slug.trim();
    if (form && slug && slug !== form.slug) setConfirmSlug(true);
    else void save();
  };
  return { action, submit, save, confirmSlug, cancelSlug: () => setConfirmSlug(false) };
}

/** Creates a form (then opens it, saying so) or saves an existing one's settings (then shows them as saved). */
export function FormEditor(props: { form?: Form; project?: ProjectDefaults; onSaved?(): Promise<void> }) {
  const { form, onSaved } = props;
  const { route, query } = useLocation();
  const projects = useProjects();
  const [initial] = useState(() => initialValues(form, query['project'] ?? ''));
  const [values, setValues] = useState(initial);
  const [saved, setSaved] = useState(false);
  const inheritance = useInheritance({
    form,
    project: props.project,
    settings: { notify_emails: ['emails'], allowed_origins: ['origins'] },
    valuesOf: (f: Form) => initialValues(f),
    bodyOf: sendable(form),
    values,
    setValues: (update) => {
      setSaved(false);
      setValues(update);
    },
  });
  const dirty = differ(values, form ? initialValues(form) : initial) || inheritance.changed;
  useUnsaved(form ? 'Settings' : 'New form', dirty);
  const { action, submit, save, confirmSlug, cancelSlug } = useSave(values, form, inheritance, async (result) => {
    setValues(initialValues(result));
    inheritance.reset(result);
    if (form) {
      setSaved(true);
      await onSaved?.();
    } else {
      confirmAfterNavigation(`Form “${result.name}” created.`, `/console/forms/${result.id}`);
      route(`/console/forms/${result.id}`);
    }
  });
  const editing: Editing = {
    values,
    set: (name) => (value) => {
      setSaved(false);
      setValues((v) => ({ ...v, [name]: value }));
    },
    errors: fieldErrors(action.error),
  };
  return (
    <form class="stack" onSubmit={submit}>
      <IdentityFields {...editing} savedSlug={form?.slug} projects={projects.data} />
      {!form && <TemplateField {...editing} />}
      <BotChallengeFields {...editing} keepsSecret={Boolean(form?.bot_challenge)} />
      <DeliveryFields {...editing} of={form ? inheritance : undefined} isNew={!form} />
      <SaveRow action={action} saved={saved} dirty={dirty} atFields={API_FIELDS}>
        {form ? 'Save changes' : 'Create form'}
      </SaveRow>
      <Confirm
        open={confirmSlug}
        title="Change the ingest URL?"
        confirmLabel="Change slug"
        onConfirm={() => void save()}
        onCancel={cancelSlug}
      >
        <p>
          Websites that post to <code>/v1/f/{form?.slug}</code> will get “not found” until you update them to the new
          URL.
        </p>
      </Confirm>
    </form>
  );
}

import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ok } from '../../api';
import type { Form, FormSettings } from '../../api-types';
import { ErrorBox, SubmitRow, useAction } from '../../components/ui';
import { BotChallengeFields, DeliveryFields, IdentityFields, initialValues, type Editing, type Values } from './fields';

const lines = (text: string) =>
  text
    .split(/[\n,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** The settings to send, or why they cannot be sent (a newly chosen bot-challenge provider needs its secret). */
function settingsOf(v: Values, form?: Form): FormSettings | string {
  const body: FormSettings = {
    name: v.name.trim(),
    status: v.status,
    honeypot_field: v.honeypot.trim(),
    notify_emails: lines(v.emails),
    redirect_url: v.redirect.trim() || null,
    allowed_origins: lines(v.origins),
  };
  if (v.slug.trim()) body.slug = v.slug.trim();
  const providerChanged = v.provider !== (form?.bot_challenge?.provider ?? '');
  if (!v.provider) body.bot_challenge = null;
  else if (v.secret) body.bot_challenge = { provider: v.provider, secret: v.secret };
  else if (providerChanged) return 'Enter the bot challenge secret for the provider you chose';
  return body;
}

/** Creates a form (then opens it) or saves an existing one's settings. */
export function FormEditor({ form }: { form?: Form }) {
  const { route } = useLocation();
  const [values, setValues] = useState(() => initialValues(form));
  const [saved, setSaved] = useState(false);
  const { pending, error, run, setError } = useAction();
  const editing: Editing = { values, set: (name) => (value) => setValues((v) => ({ ...v, [name]: value })) };
  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    const body = settingsOf(values, form);
    if (typeof body === 'string') return setError(new Error(body));
    const result = await run(() =>
      form
        ? ok(api.PATCH('/v1/forms/{id}', { params: { path: { id: form.id } }, body }))
        : ok(api.POST('/v1/forms', { body })),
    );
    if (!result) return;
    setValues((v) => ({ ...v, secret: '' }));
    if (form) setSaved(true);
    else route(`/console/forms/${result.id}`);
  };
  return (
    <form class="stack" onSubmit={submit}>
      <IdentityFields {...editing} />
      <BotChallengeFields {...editing} keepsSecret={Boolean(form?.bot_challenge)} />
      <DeliveryFields {...editing} />
      <ErrorBox error={error} />
      {saved && (
        <p class="ok" role="status">
          Saved.
        </p>
      )}
      <SubmitRow pending={pending}>{form ? 'Save changes' : 'Create form'}</SubmitRow>
    </form>
  );
}

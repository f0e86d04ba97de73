import { useState } from 'preact/hooks';
import { api } from '../api';
import { navigate } from '../router';
import type { Form } from '../types';
import { Confirm, ErrorBox, Link, useAction } from '../components/ui';
import { FormFrame } from '../components/form-nav';
import { Snippets } from '../components/snippets';

/** `/console/forms/new` creates; `/console/forms/:id` edits every setting, shows the snippets, deletes. */
export function FormPage({ formId }: { formId?: string }) {
  if (!formId)
    return (
      <>
        <p class="crumbs">
          <Link href="/console/forms">Forms</Link> /
        </p>
        <h1>New form</h1>
        <FormEditor />
      </>
    );
  return (
    <FormFrame formId={formId}>
      {(form) => (
        <>
          <Snippets form={form} />
          <h2>Settings</h2>
          <FormEditor form={form} />
          <DeleteForm form={form} />
        </>
      )}
    </FormFrame>
  );
}

const lines = (text: string) =>
  text
    .split(/[\n,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

function FormEditor({ form }: { form?: Form }) {
  const [name, setName] = useState(form?.name ?? '');
  const [slug, setSlug] = useState(form?.slug ?? '');
  const [status, setStatus] = useState<Form['status']>(form?.status ?? 'live');
  const [honeypot, setHoneypot] = useState(form?.honeypot_field ?? '_gotcha');
  const [provider, setProvider] = useState<string>(form?.bot_challenge?.provider ?? '');
  const [secret, setSecret] = useState('');
  const [emails, setEmails] = useState((form?.notify_emails ?? []).join('\n'));
  const [redirect, setRedirect] = useState(form?.redirect_url ?? '');
  const [origins, setOrigins] = useState((form?.allowed_origins ?? []).join('\n'));
  const [saved, setSaved] = useState(false);
  const { pending, error, run, setError } = useAction();

  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    const body: Record<string, unknown> = {
      name: name.trim(),
      status,
      honeypot_field: honeypot.trim(),
      notify_emails: lines(emails),
      redirect_url: redirect.trim() || null,
      allowed_origins: lines(origins),
    };
    if (slug.trim()) body['slug'] = slug.trim();
    const providerChanged = provider !== (form?.bot_challenge?.provider ?? '');
    if (!provider) body['bot_challenge'] = null;
    else if (secret) body['bot_challenge'] = { provider, secret };
    else if (providerChanged) {
      setError(new Error('Enter the bot challenge secret for the provider you chose'));
      return;
    }
    const result = await run(() =>
      form ? api<Form>('PATCH', `/v1/forms/${form.id}`, body) : api<Form>('POST', '/v1/forms', body),
    );
    if (!result) return;
    setSecret('');
    if (form) setSaved(true);
    else navigate(`/console/forms/${result.id}`);
  };

  return (
    <form class="stack" onSubmit={submit}>
      <div class="field">
        <label for="f-name">Name</label>
        <input id="f-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="f-slug">Slug</label>
        <input
          id="f-slug"
          maxLength={64}
          pattern="[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
          aria-describedby="f-slug-help"
          value={slug}
          onInput={(e) => setSlug(e.currentTarget.value)}
        />
        <p id="f-slug-help" class="help">
          Lower-case letters, digits and hyphens; made from the name when empty. It is part of the ingest URL.
        </p>
      </div>
      <div class="field">
        <label for="f-status">Status</label>
        <select id="f-status" value={status} onChange={(e) => setStatus(e.currentTarget.value as Form['status'])}>
          <option value="live">live — accepts posts</option>
          <option value="paused">paused</option>
          <option value="draft">draft</option>
        </select>
      </div>
      <div class="field">
        <label for="f-honeypot">Honeypot field</label>
        <input
          id="f-honeypot"
          required
          maxLength={100}
          aria-describedby="f-honeypot-help"
          value={honeypot}
          onInput={(e) => setHoneypot(e.currentTarget.value)}
        />
        <p id="f-honeypot-help" class="help">
          A hidden field people never fill; posts that fill it are kept as spam.
        </p>
      </div>
      <fieldset>
        <legend>Bot challenge</legend>
        <div class="field">
          <label for="f-provider">Provider</label>
          <select id="f-provider" value={provider} onChange={(e) => setProvider(e.currentTarget.value)}>
            <option value="">none</option>
            <option value="turnstile">Cloudflare Turnstile</option>
            <option value="hcaptcha">hCaptcha</option>
            <option value="recaptcha">reCAPTCHA</option>
          </select>
        </div>
        {provider && (
          <div class="field">
            <label for="f-secret">Provider secret key</label>
            <input
              id="f-secret"
              type="password"
              autocomplete="off"
              aria-describedby="f-secret-help"
              value={secret}
              onInput={(e) => setSecret(e.currentTarget.value)}
            />
            <p id="f-secret-help" class="help">
              Stored encrypted and never shown again.{' '}
              {form?.bot_challenge ? 'Leave empty to keep the current one.' : ''}
            </p>
          </div>
        )}
      </fieldset>
      <div class="field">
        <label for="f-emails">Notify e-mails</label>
        <textarea
          id="f-emails"
          rows={2}
          aria-describedby="f-emails-help"
          value={emails}
          onInput={(e) => setEmails(e.currentTarget.value)}
        />
        <p id="f-emails-help" class="help">
          One address per line; each gets an e-mail per submission.
        </p>
      </div>
      <div class="field">
        <label for="f-redirect">Redirect URL</label>
        <input
          id="f-redirect"
          type="url"
          placeholder="https://example.com/thanks"
          aria-describedby="f-redirect-help"
          value={redirect}
          onInput={(e) => setRedirect(e.currentTarget.value)}
        />
        <p id="f-redirect-help" class="help">
          Where a browser goes after posting the HTML form; empty shows a thank-you page.
        </p>
      </div>
      <div class="field">
        <label for="f-origins">Allowed origins</label>
        <textarea
          id="f-origins"
          rows={2}
          placeholder="https://example.com"
          aria-describedby="f-origins-help"
          value={origins}
          onInput={(e) => setOrigins(e.currentTarget.value)}
        />
        <p id="f-origins-help" class="help">
          One origin per line; browser posts from other websites are refused. Empty: any website.
        </p>
      </div>
      <ErrorBox error={error} />
      {saved && (
        <p class="ok" role="status">
          Saved.
        </p>
      )}
      <div class="actions">
        <button type="submit" disabled={pending}>
          {form ? 'Save changes' : 'Create form'}
        </button>
      </div>
    </form>
  );
}

function DeleteForm({ form }: { form: Form }) {
  const [open, setOpen] = useState(false);
  const { error, run } = useAction();
  const remove = async () => {
    setOpen(false);
    const ok = await run(async () => {
      await api('DELETE', `/v1/forms/${form.id}`);
      return true;
    });
    if (ok) navigate('/console/forms');
  };
  return (
    <section class="danger-zone" aria-labelledby="delete-title">
      <h2 id="delete-title">Delete this form</h2>
      <p>Deletes the form with all its submissions, their files, and its webhooks. This cannot be undone.</p>
      <ErrorBox error={error} />
      <button type="button" class="danger" onClick={() => setOpen(true)}>
        Delete form
      </button>
      <Confirm
        open={open}
        title={`Delete “${form.name}”?`}
        confirmLabel="Delete form"
        onConfirm={remove}
        onCancel={() => setOpen(false)}
      >
        <p>All its submissions, files and webhooks are deleted too.</p>
      </Confirm>
    </section>
  );
}

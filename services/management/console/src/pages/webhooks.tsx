import { useState } from 'preact/hooks';
import { api, ok } from '../api';
import type { Form } from '../api-types';
import { ErrorBox, Loading, ShownOnce, SubmitRow, TextField, useAction, useResource } from '../components/ui';
import { FormFrame } from '../components/form-nav';
import { WebhookCard } from './webhooks/card';

export function WebhooksPage({ id }: { id: string }) {
  return <FormFrame formId={id}>{(form) => <Webhooks form={form} />}</FormFrame>;
}

type Secret = { label: string; value: string };

function Webhooks({ form }: { form: Form }) {
  const path = { params: { path: { id: form.id } } };
  const hooks = useResource(() => ok(api.GET('/v1/forms/{id}/webhooks', path)), [form.id]);
  const [secret, setSecret] = useState<Secret | null>(null);
  return (
    <>
      <h2>Webhooks</h2>
      <p class="muted">
        Each submission is sent as signed JSON to every enabled webhook, retried after 1 s, 10 s, 1 min, 10 min and 1 h.
      </p>
      {secret && (
        <ShownOnce label={secret.label} value={secret.value}>
          Verify the <code>x-service-signature</code> header with it. It is shown only this once: copy it now.
        </ShownOnce>
      )}
      <AddWebhook formId={form.id} error={hooks.error} onAdded={setSecret} onChange={hooks.reload} />
      {hooks.loading && !hooks.data && <Loading what="webhooks" />}
      {hooks.data && hooks.data.data.length === 0 && <p class="empty">No webhooks yet: add one above.</p>}
      <ul class="cards">
        {hooks.data?.data.map((h) => (
          <WebhookCard
            key={h.id}
            hook={h}
            formId={form.id}
            onChange={() => hooks.reload()}
            onSecret={(value) => setSecret({ label: `New signing secret of ${h.url}`, value })}
          />
        ))}
      </ul>
    </>
  );
}

/** Adds a webhook by URL; its signing secret is handed up to be shown once. Shows the list's load error too. */
function AddWebhook(props: {
  formId: string;
  error: unknown;
  onAdded(secret: Secret): void;
  onChange(): Promise<void>;
}) {
  const [url, setUrl] = useState('');
  const add = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const created = await add.run(() =>
      ok(api.POST('/v1/forms/{id}/webhooks', { params: { path: { id: props.formId } }, body: { url: url.trim() } })),
    );
    if (!created?.secret) return;
    setUrl('');
    props.onAdded({ label: `Signing secret of ${created.url}`, value: created.secret });
    await props.onChange();
  };
  return (
    <>
      <form class="inline-form" onSubmit={submit}>
        <TextField
          id="w-url"
          label="Webhook URL"
          grow
          type="url"
          required
          placeholder="https://example.com/hooks/intake"
          value={url}
          onValue={setUrl}
        />
        <SubmitRow pending={add.pending}>Add webhook</SubmitRow>
      </form>
      <ErrorBox error={add.error ?? props.error} />
    </>
  );
}

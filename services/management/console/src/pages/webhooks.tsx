import { useState } from 'preact/hooks';
import { api } from '../api';
import type { Form, ListOf, Webhook } from '../types';
import { Confirm, CopyButton, ErrorBox, Link, Loading, ShownOnce, useAction, useResource } from '../components/ui';
import { FormFrame } from '../components/form-nav';

interface TestResult {
  status_code: number;
  ok: boolean;
  error?: string;
  duration_ms: number;
}

export function WebhooksPage({ formId }: { formId: string }) {
  return <FormFrame formId={formId}>{(form) => <Webhooks form={form} />}</FormFrame>;
}

function Webhooks({ form }: { form: Form }) {
  const hooks = useResource(() => api<ListOf<Webhook>>('GET', `/v1/forms/${form.id}/webhooks`), [form.id]);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const add = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const created = await add.run(() => api<Webhook>('POST', `/v1/forms/${form.id}/webhooks`, { url: url.trim() }));
    if (!created?.secret) return;
    setUrl('');
    setSecret({ label: `Signing secret of ${created.url}`, value: created.secret });
    await hooks.reload();
  };
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
      <form class="inline-form" onSubmit={submit}>
        <div class="field grow">
          <label for="w-url">Webhook URL</label>
          <input
            id="w-url"
            type="url"
            required
            placeholder="https://example.com/hooks/intake"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </div>
        <div class="actions">
          <button type="submit" disabled={add.pending}>
            Add webhook
          </button>
        </div>
      </form>
      <ErrorBox error={add.error ?? hooks.error} />
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

function WebhookCard(props: { hook: Webhook; formId: string; onChange(): void; onSecret(secret: string): void }) {
  const { hook } = props;
  const action = useAction();
  const [test, setTest] = useState<TestResult | null>(null);
  const [curl, setCurl] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<'rotate' | 'delete' | null>(null);
  const ping = async () => {
    setTest(null);
    const result = await action.run(() => api<TestResult>('POST', `/v1/webhooks/${hook.id}/test`));
    if (result) setTest(result);
  };
  const sample = async () => {
    const result = await action.run(() => api<{ curl: string }>('GET', `/v1/webhooks/${hook.id}/sample`));
    if (result) setCurl(result.curl);
  };
  const setEnabled = async (enabled: boolean) => {
    await action.run(() => api('PATCH', `/v1/webhooks/${hook.id}`, { enabled }));
    props.onChange();
  };
  const confirmed = async () => {
    const what = confirm;
    setConfirm(null);
    if (what === 'rotate') {
      const updated = await action.run(() => api<Webhook>('PATCH', `/v1/webhooks/${hook.id}`, { rotate_secret: true }));
      if (updated?.secret) props.onSecret(updated.secret);
    } else if (what === 'delete') {
      await action.run(() => api('DELETE', `/v1/webhooks/${hook.id}`));
      props.onChange();
    }
  };
  return (
    <li class="card">
      <div class="card-head">
        <h3 class="wrap">{hook.url}</h3>
        <span class={`badge badge-${hook.enabled ? 'live' : 'paused'}`}>{hook.enabled ? 'enabled' : 'disabled'}</span>
      </div>
      <div class="toolbar">
        <button type="button" disabled={action.pending} onClick={ping}>
          Send test ping
        </button>
        <button type="button" class="secondary" disabled={action.pending} onClick={sample}>
          Copy as curl
        </button>
        <Link class="button secondary" href={`/console/forms/${props.formId}/webhooks/${hook.id}`}>
          Delivery log
        </Link>
        <button type="button" class="secondary" disabled={action.pending} onClick={() => setEnabled(!hook.enabled)}>
          {hook.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" class="secondary" disabled={action.pending} onClick={() => setConfirm('rotate')}>
          Rotate secret
        </button>
        <button type="button" class="danger" disabled={action.pending} onClick={() => setConfirm('delete')}>
          Delete
        </button>
      </div>
      {test && (
        <p class={test.ok ? 'ok' : 'error'} role="status">
          Test ping: {test.ok ? 'succeeded' : 'failed'} · status {test.status_code || 'none'} · {test.duration_ms} ms
          {test.error ? ` · ${test.error}` : ''}
        </p>
      )}
      {curl && (
        <div class="snippet">
          <div class="snippet-head">
            <h4>A signed sample request</h4>
            <CopyButton text={curl} label="Copy command" />
          </div>
          <pre tabIndex={0} aria-label="curl command">
            <code>{curl}</code>
          </pre>
        </div>
      )}
      <ErrorBox error={action.error} />
      <Confirm
        open={confirm !== null}
        title={confirm === 'rotate' ? 'Rotate the signing secret?' : 'Delete this webhook?'}
        confirmLabel={confirm === 'rotate' ? 'Rotate secret' : 'Delete webhook'}
        onConfirm={confirmed}
        onCancel={() => setConfirm(null)}
      >
        <p>
          {confirm === 'rotate'
            ? 'The old secret stops working at once; update your receiver with the new one.'
            : 'Its pending deliveries are dropped with it.'}
        </p>
      </Confirm>
    </li>
  );
}

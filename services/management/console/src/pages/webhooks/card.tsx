import { useState } from 'preact/hooks';
import { api, ok } from '../../api';
import type { Webhook, WebhookTest } from '../../api-types';
import { Confirm, CopyButton, ErrorBox, useAction } from '../../components/ui';
import { FormatPicker, ReplayFailedSince, WebhookHealth } from './health';

type CardProps = { hook: Webhook; formId: string; onChange(): void; onSecret(secret: string): void };
type Confirming = 'rotate' | 'delete' | null;

/** What can be done to one webhook: ping it, show a signed sample, enable or disable, rotate its secret, delete. */
function useWebhookActions({ hook, onChange, onSecret }: CardProps) {
  const action = useAction();
  const [test, setTest] = useState<WebhookTest | null>(null);
  const [curl, setCurl] = useState<string | null>(null);
  const path = { params: { path: { id: hook.id } } };
  const ping = async () => {
    setTest(null);
    const result = await action.run(() => ok(api.POST('/v1/webhooks/{id}/test', path)));
    if (result) setTest(result);
  };
  const sample = async () => {
    const result = await action.run(() => ok(api.GET('/v1/webhooks/{id}/sample', path)));
    if (result) setCurl(result.curl);
  };
  const setEnabled = async (enabled: boolean) => {
    await action.run(() => ok(api.PATCH('/v1/webhooks/{id}', { ...path, body: { enabled } })));
    onChange();
  };
  const confirmed = async (what: Confirming) => {
    if (what === 'rotate') {
      const updated = await action.run(() =>
        ok(api.PATCH('/v1/webhooks/{id}', { ...path, body: { rotate_secret: true } })),
      );
      if (updated?.secret) onSecret(updated.secret);
    } else if (what === 'delete') {
      await action.run(() => ok(api.DELETE('/v1/webhooks/{id}', path)));
      onChange();
    }
  };
  return { action, test, curl, ping, sample, setEnabled, confirmed };
}

export function WebhookCard(props: CardProps) {
  const { hook } = props;
  const { action, test, curl, ping, sample, setEnabled, confirmed } = useWebhookActions(props);
  const [confirm, setConfirm] = useState<Confirming>(null);
  const pending = action.pending;
  return (
    <li class="card">
      <div class="card-head">
        <h3 class="wrap">{hook.url}</h3>
        <span class={`badge badge-${hook.enabled ? 'live' : 'paused'}`}>{hook.enabled ? 'enabled' : 'disabled'}</span>
      </div>
      <WebhookHealth hook={hook} />
      <FormatPicker hook={hook} onChange={() => props.onChange()} />
      <ReplayFailedSince hook={hook} onDone={() => props.onChange()} />
      <div class="toolbar">
        <button type="button" disabled={pending} onClick={ping}>
          Send test ping
        </button>
        <button type="button" class="secondary" disabled={pending} onClick={sample}>
          Copy as curl
        </button>
        <a class="button secondary" href={`/console/forms/${props.formId}/webhooks/${hook.id}`}>
          Delivery log
        </a>
        <button type="button" class="secondary" disabled={pending} onClick={() => setEnabled(!hook.enabled)}>
          {hook.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" class="secondary" disabled={pending} onClick={() => setConfirm('rotate')}>
          Rotate secret
        </button>
        <button type="button" class="danger" disabled={pending} onClick={() => setConfirm('delete')}>
          Delete
        </button>
      </div>
      {test && <TestResult test={test} />}
      {curl && <CurlSample curl={curl} />}
      <ErrorBox error={action.error} />
      <ConfirmChange
        confirm={confirm}
        onConfirm={() => {
          setConfirm(null);
          void confirmed(confirm);
        }}
        onCancel={() => setConfirm(null)}
      />
    </li>
  );
}

function TestResult({ test }: { test: WebhookTest }) {
  return (
    <p class={test.ok ? 'ok' : 'error'} role="status">
      Test ping: {test.ok ? 'succeeded' : 'failed'} · status {test.status_code || 'none'} · {test.duration_ms} ms
      {test.error ? ` · ${test.error}` : ''}
    </p>
  );
}

function CurlSample({ curl }: { curl: string }) {
  return (
    <div class="snippet">
      <div class="snippet-head">
        <h4>A signed sample request</h4>
        <CopyButton text={curl} label="Copy command" />
      </div>
      <pre tabIndex={0} aria-label="curl command">
        <code>{curl}</code>
      </pre>
    </div>
  );
}

function ConfirmChange(props: { confirm: Confirming; onConfirm(): void; onCancel(): void }) {
  const rotate = props.confirm === 'rotate';
  return (
    <Confirm
      open={props.confirm !== null}
      title={rotate ? 'Rotate the signing secret?' : 'Delete this webhook?'}
      confirmLabel={rotate ? 'Rotate secret' : 'Delete webhook'}
      onConfirm={props.onConfirm}
      onCancel={props.onCancel}
    >
      <p>
        {rotate
          ? 'The old secret stops working at once; update your receiver with the new one.'
          : 'Its pending deliveries are dropped with it.'}
      </p>
    </Confirm>
  );
}

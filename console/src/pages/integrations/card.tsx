import { useState } from 'preact/hooks';
import { may } from '../../people';
import { api, ok } from '../../api';
import type { Webhook } from '../../api-types';
import { ErrorBox, SubmitRow, useAction } from '../../components/ui';
import { destinationOf, integrationName, toolName, ToolSettings, type Settings, type Tool } from './settings';
import {
  ConfirmChange,
  PingProgress,
  TestResult,
  useWebhookActions,
  type CardProps,
  type Confirming,
} from '../webhooks/card';
import { ReplayFailedSince, WebhookHealth } from '../webhooks/health';

/** One connected tool: where it writes, how it fares, a connection check, a change of settings, disable, delete. */
export function IntegrationCard(props: CardProps) {
  const { hook } = props;
  const { action, test, pinging, ping, setEnabled, confirmed } = useWebhookActions(props);
  const [confirm, setConfirm] = useState<Confirming>(null);
  const [editing, setEditing] = useState(false);
  const pending = action.pending;
  const tool = toolName(hook.format);
  return (
    <li class="card">
      <div class="card-head">
        <h3 class="wrap">{integrationName(hook)}</h3>
        <span class={`badge badge-${hook.enabled ? 'live' : 'paused'}`}>{hook.enabled ? 'enabled' : 'disabled'}</span>
      </div>
      {hook.destination?.client_email && (
        <p class="muted wrap">
          Writes as <code>{hook.destination.client_email}</code>: share the spreadsheet with it as an editor.
        </p>
      )}
      <WebhookHealth hook={hook} />
      {may('replayWebhook') && <ReplayFailedSince hook={hook} onDone={(message) => props.onChange(message)} />}
      {editing && (
        <ChangeConnection
          hook={hook}
          onDone={(changed) => {
            setEditing(false);
            if (changed) props.onChange(`${tool} connection changed.`);
          }}
        />
      )}
      <div class="toolbar">
        {may('testWebhook') && (
          <button type="button" disabled={pending} onClick={ping}>
            Check connection
          </button>
        )}
        <a class="button secondary" href={hook.url} target="_blank" rel="noopener noreferrer">
          Open in {tool}
        </a>
        <a class="button secondary" href={`/console/forms/${props.formId}/integrations/${hook.id}`}>
          Delivery log
        </a>
        {may('updateWebhook') && (
          <>
            {!editing && (
              <button type="button" class="secondary" disabled={pending} onClick={() => setEditing(true)}>
                Change connection
              </button>
            )}
            <button type="button" class="secondary" disabled={pending} onClick={() => setEnabled(!hook.enabled)}>
              {hook.enabled ? 'Disable' : 'Enable'}
            </button>
          </>
        )}
        {may('deleteWebhook') && (
          <button type="button" class="danger" disabled={pending} onClick={() => setConfirm('delete')}>
            Delete
          </button>
        )}
      </div>
      {pinging && <PingProgress />}
      {test && <TestResult test={test} label="Connection check" />}
      <ErrorBox error={action.error} />
      <ConfirmChange
        confirm={confirm}
        noun="integration"
        onConfirm={() => {
          setConfirm(null);
          void confirmed(confirm);
        }}
        onCancel={() => setConfirm(null)}
      />
    </li>
  );
}

/** Changes where an integration writes, or its credential; what is left empty stays as it is. */
function ChangeConnection({ hook, onDone }: { hook: Webhook; onDone(changed?: boolean): void }) {
  const tool = hook.format as Tool;
  const [settings, setSettings] = useState<Settings>(() => ({ ...(hook.destination as Settings) }));
  const save = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { destination: destinationOf(tool, settings) };
    const updated = await save.run(() =>
      ok(api.PATCH('/v1/webhooks/{id}', { params: { path: { id: hook.id } }, body })),
    );
    if (updated) onDone(true);
  };
  return (
    <form class="stack" aria-label={`Change the ${toolName(tool)} connection`} onSubmit={submit}>
      <ToolSettings
        tool={tool}
        settings={settings}
        onSettings={setSettings}
        error={save.error}
        idPrefix={`i-${hook.id}`}
        changing
      />
      <SubmitRow pending={save.pending}>Save connection</SubmitRow>
      <button type="button" class="secondary" onClick={() => onDone()}>
        Cancel
      </button>
      <ErrorBox error={save.error} atFields={['destination']} />
    </form>
  );
}

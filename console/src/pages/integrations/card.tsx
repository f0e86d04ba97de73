import { useState } from 'preact/hooks';
import { api, ok } from '../../api';
import type { Webhook } from '../../api-types';
import { ErrorBox, SubmitRow, useAction } from '../../components/ui';
import { destinationOf, integrationName, toolName, ToolSettings, type Settings, type Tool } from './settings';
import { HookCard, useWebhookActions, type CardProps } from '../webhooks/card';

/** One connected tool: where it writes, how it fares, a connection check, a change of settings, disable, delete. */
export function IntegrationCard(props: CardProps) {
  const { hook } = props;
  const tool = toolName(hook.format);
  return (
    <HookCard
      {...props}
      actions={useWebhookActions(props)}
      title={integrationName(hook)}
      intro={
        hook.destination?.client_email && (
          <p class="muted wrap">
            Writes as <code>{hook.destination.client_email}</code>: share the spreadsheet with it as an editor.
          </p>
        )
      }
      folder="integrations"
      pingLabel="Check connection"
      testLabel="Connection check"
      tools={
        <a class="button secondary" href={hook.url} target="_blank" rel="noopener noreferrer">
          Open in {tool}
        </a>
      }
      editLabel="Change connection"
      editor={(done) => (
        <ChangeConnection hook={hook} onDone={(changed) => done(changed ? `${tool} connection changed.` : undefined)} />
      )}
      noun="integration"
    />
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

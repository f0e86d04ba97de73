import { useState } from 'preact/hooks';
import { may } from '../people';
import { api, ok } from '../api';
import type { Form } from '../api-types';
import { ErrorBox, Loading, SelectField, SubmitRow, useAction } from '../components/ui';
import { FormFrame } from '../components/form-nav';
import { IntegrationCard } from './integrations/card';
import { useFormHooks } from './webhooks/card';
import {
  destinationOf,
  isIntegration,
  toolName,
  TOOLS,
  ToolSettings,
  type Settings,
  type Tool,
} from './integrations/settings';

export function IntegrationsPage({ id }: { id: string }) {
  return (
    <FormFrame formId={id} view="Integrations">
      {(form) => <Integrations form={form} />}
    </FormFrame>
  );
}

function Integrations({ form }: { form: Form }) {
  const { hooks, done, changed } = useFormHooks(form.id);
  const connected = hooks.data?.data.filter(isIntegration) ?? [];
  return (
    <>
      <h2>Integrations</h2>
      <p class="muted">
        Each submission is written to the tools connected here: a row in Google Sheets, a record in Airtable, a page in
        Notion. They are retried, logged and replayed like webhooks; a failure says what the tool answered.
      </p>
      {done && (
        <p class="ok" role="status">
          {done}
        </p>
      )}
      <ErrorBox error={hooks.error} />
      {hooks.loading && !hooks.data && <Loading what="integrations" />}
      {hooks.data && connected.length === 0 && <p class="empty">No tool connected yet.</p>}
      <ul class="cards">
        {connected.map((h) => (
          <IntegrationCard key={h.id} hook={h} formId={form.id} onChange={changed} />
        ))}
      </ul>
      {may('createWebhook') && <Connect formId={form.id} onAdded={changed} />}
    </>
  );
}

/** Connects a tool: which one, then its settings with what to do on the tool's side. */
function Connect({ formId, onAdded }: { formId: string; onAdded(message: string): void }) {
  const [tool, setTool] = useState<Tool>('google_sheets');
  const [settings, setSettings] = useState<Settings>({});
  const add = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { format: tool, destination: destinationOf(tool, settings) };
    const created = await add.run(() =>
      ok(api.POST('/v1/forms/{id}/webhooks', { params: { path: { id: formId } }, body })),
    );
    if (!created) return;
    setSettings({});
    onAdded(`${toolName(tool)} connected. Check the connection to see that it can write there.`);
  };
  return (
    <section aria-labelledby="connect-title">
      <h3 id="connect-title">Connect a tool</h3>
      <form class="stack" aria-labelledby="connect-title" onSubmit={submit}>
        <SelectField
          id="i-tool"
          label="Tool"
          value={tool}
          options={TOOLS}
          onValue={(t) => {
            setTool(t);
            add.setError(undefined);
          }}
        />
        <ToolSettings tool={tool} settings={settings} onSettings={setSettings} error={add.error} idPrefix="i" />
        <SubmitRow pending={add.pending}>Connect {toolName(tool)}</SubmitRow>
      </form>
      <ErrorBox error={add.error} atFields={['destination']} />
    </section>
  );
}

import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { may } from '../../people';
import { api, ok } from '../../api';
import type { Webhook, WebhookTest } from '../../api-types';
import { Confirm, CopyButton, ErrorBox, SubmitRow, TextField, useAction, useResource } from '../../components/ui';
import { fieldErrors } from '../../components/field-errors';
import { FormatPicker, ReplayFailedSince, WebhookHealth } from './health';

export type CardProps = {
  hook: Webhook;
  formId: string;
  /** The list changed; `message` confirms what was done, when the card itself goes away. */
  onChange(message?: string): void;
  onSecret?(secret: string): void;
};
type Confirming = 'rotate' | 'delete' | null;

/**
 * A form's webhooks and integrations (one list, each page shows its own) and the message confirming the last change:
 * `changed(message)` says it, when there is one, and loads the list again (what a card's `onChange` does).
 */
export function useFormHooks(formId: string) {
  const hooks = useResource(
    () => ok(api.GET('/v1/forms/{id}/webhooks', { params: { path: { id: formId } } })),
    [formId],
  );
  const [done, setDone] = useState('');
  const changed = (message?: string) => {
    if (message) setDone(message);
    void hooks.reload();
  };
  return { hooks, done, setDone, changed };
}

/** What can be done to one webhook: ping it, show a signed sample, enable or disable, rotate its secret, delete. */
export function useWebhookActions({ hook, onChange, onSecret }: CardProps) {
  const action = useAction();
  const [test, setTest] = useState<WebhookTest | null>(null);
  const [pinging, setPinging] = useState(false);
  const [curl, setCurl] = useState<string | null>(null);
  const path = { params: { path: { id: hook.id } } };
  const ping = async () => {
    setTest(null);
    setPinging(true);
    const result = await action.run(() => ok(api.POST('/v1/webhooks/{id}/test', path)));
    setPinging(false);
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
      if (updated?.secret) onSecret?.(updated.secret);
    } else if (what === 'delete') {
      const deleted = await action.run(async () => {
        await ok(api.DELETE('/v1/webhooks/{id}', path));
        return true;
      });
      if (deleted) onChange(`${hook.destination ? 'Integration' : 'Webhook'} ${hook.url} deleted.`);
    }
  };
  return { action, test, pinging, curl, ping, sample, setEnabled, confirmed };
}

/** What a card shows besides the parts every webhook card has (see HookCard). */
type HookCardProps = CardProps & {
  actions: ReturnType<typeof useWebhookActions>;
  title: string;
  /** Said under the title, before the health. */
  intro?: ComponentChildren;
  /** Shown after the health, before the replay. */
  children?: ComponentChildren;
  /** The folder of the delivery log's page (`/console/forms/<form>/<folder>/<id>`). */
  folder: 'webhooks' | 'integrations';
  pingLabel: string;
  /** How the ping's result is named. */
  testLabel?: string;
  /** Buttons and links after the ping. */
  tools: ComponentChildren;
  editLabel: string;
  /** The form that changes the webhook; `done` closes it, with the message to confirm a change. */
  editor(done: (message?: string) => void): ComponentChildren;
  /** Offers to rotate the signing secret. */
  rotates?: boolean;
  /** What is deleted (see ConfirmChange). */
  noun?: string;
};

/**
 * One webhook or integration as a card: its name and state, health, replay, the change form while open, and a toolbar
 * (ping, the card's own tools, delivery log, change, enable or disable, rotate, delete) with what its actions answer.
 */
export function HookCard(props: HookCardProps) {
  const { hook, actions } = props;
  const { action, test, pinging, curl, ping, setEnabled, confirmed } = actions;
  const [confirm, setConfirm] = useState<Confirming>(null);
  const [editing, setEditing] = useState(false);
  const pending = action.pending;
  return (
    <li class="card">
      <div class="card-head">
        <h3 class="wrap">{props.title}</h3>
        <span class={`badge badge-${hook.enabled ? 'live' : 'paused'}`}>{hook.enabled ? 'enabled' : 'disabled'}</span>
      </div>
      {props.intro}
      <WebhookHealth hook={hook} />
      {props.children}
      {may('replayWebhook') && <ReplayFailedSince hook={hook} onDone={(message) => props.onChange(message)} />}
      {editing &&
        props.editor((message) => {
          setEditing(false);
          if (message) props.onChange(message);
        })}
      <div class="toolbar">
        {may('testWebhook') && (
          <button type="button" disabled={pending} onClick={ping}>
            {props.pingLabel}
          </button>
        )}
        {props.tools}
        <a class="button secondary" href={`/console/forms/${props.formId}/${props.folder}/${hook.id}`}>
          Delivery log
        </a>
        {may('updateWebhook') && (
          <>
            {!editing && (
              <button type="button" class="secondary" disabled={pending} onClick={() => setEditing(true)}>
                {props.editLabel}
              </button>
            )}
            <button type="button" class="secondary" disabled={pending} onClick={() => setEnabled(!hook.enabled)}>
              {hook.enabled ? 'Disable' : 'Enable'}
            </button>
            {props.rotates && (
              <button type="button" class="secondary" disabled={pending} onClick={() => setConfirm('rotate')}>
                Rotate secret
              </button>
            )}
          </>
        )}
        {may('deleteWebhook') && (
          <button type="button" class="danger" disabled={pending} onClick={() => setConfirm('delete')}>
            Delete
          </button>
        )}
      </div>
      {pinging && <PingProgress />}
      {test && <TestResult test={test} label={props.testLabel} />}
      {curl && <CurlSample curl={curl} />}
      <ErrorBox error={action.error} />
      <ConfirmChange
        confirm={confirm}
        noun={props.noun}
        onConfirm={() => {
          setConfirm(null);
          void confirmed(confirm);
        }}
        onCancel={() => setConfirm(null)}
      />
    </li>
  );
}

export function WebhookCard(props: CardProps) {
  const actions = useWebhookActions(props);
  return (
    <HookCard
      {...props}
      actions={actions}
      title={props.hook.url}
      folder="webhooks"
      pingLabel="Send test ping"
      tools={
        <button type="button" class="secondary" disabled={actions.action.pending} onClick={actions.sample}>
          Copy as curl
        </button>
      }
      editLabel="Edit URL"
      editor={(done) => <EditUrl hook={props.hook} onDone={(url) => done(url && `Webhook URL changed to ${url}.`)} />}
      // A chat message is not signed: there is no secret to rotate.
      rotates={!CHAT_FORMATS.includes(props.hook.format)}
    >
      <FormatPicker
        hook={props.hook}
        onChange={(message) => props.onChange(message)}
        onSecret={(secret) => props.onSecret?.(secret)}
      />
    </HookCard>
  );
}

/** A chat webhook's URL is its credential: the API shows only its host, so a new one is typed whole. */
const CHAT_FORMATS: Webhook['format'][] = ['slack', 'discord', 'teams'];

/** Changes the webhook's URL in place; the refusal of a URL is said at the field. */
function EditUrl({ hook, onDone }: { hook: Webhook; onDone(changed?: string): void }) {
  const [url, setUrl] = useState(CHAT_FORMATS.includes(hook.format) ? '' : hook.url);
  const save = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { url: url.trim() };
    const updated = await save.run(() =>
      ok(api.PATCH('/v1/webhooks/{id}', { params: { path: { id: hook.id } }, body })),
    );
    if (updated) onDone(updated.url);
  };
  const id = `w-edit-${hook.id}`;
  return (
    <form class="inline-form" onSubmit={submit}>
      <TextField
        id={id}
        label="New URL"
        grow
        type="url"
        required
        value={url}
        onValue={setUrl}
        error={fieldErrors(save.error)['url']}
      />
      <SubmitRow pending={save.pending}>Save URL</SubmitRow>
      <button type="button" class="secondary" onClick={() => onDone()}>
        Cancel
      </button>
      <ErrorBox error={save.error} atFields={['url']} />
    </form>
  );
}

/** Said while a test ping waits for the receiver (which may take up to the deployment's timeout). */
function PingProgress() {
  return (
    <p class="progress" role="status">
      <progress aria-label="Test ping under way" /> Sending a test ping and waiting for the receiver to answer…
    </p>
  );
}

function TestResult({ test, label = 'Test ping' }: { test: WebhookTest; label?: string }) {
  return (
    <p class={test.ok ? 'ok' : 'error'} role="status">
      {label}: {test.ok ? 'succeeded' : 'failed'} · status {test.status_code || 'none'} · {test.duration_ms} ms
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

function ConfirmChange(props: {
  confirm: Confirming;
  onConfirm(): void;
  onCancel(): void;
  /** What is deleted: `webhook` unless said. */
  noun?: string;
}) {
  const rotate = props.confirm === 'rotate';
  const noun = props.noun ?? 'webhook';
  return (
    <Confirm
      open={props.confirm !== null}
      title={rotate ? 'Rotate the signing secret?' : `Delete this ${noun}?`}
      confirmLabel={rotate ? 'Rotate secret' : `Delete ${noun}`}
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

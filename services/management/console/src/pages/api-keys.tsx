import { useState } from 'preact/hooks';
import { api, ok, session } from '../api';
import type { ApiKey, NewApiKey } from '../api-types';
import {
  ACTIONS_COLUMN,
  Confirm,
  ErrorBox,
  Loading,
  SelectField,
  ShownOnce,
  SubmitRow,
  Table,
  TextField,
  formatTime,
  plainOptions,
  useAction,
  useConfirmed,
  useResource,
  type Action,
} from '../components/ui';
import { useTitle } from '../title';

export function ApiKeysPage() {
  useTitle('API keys');
  const keys = useResource(() => ok(api.GET('/v1/api-keys')), []);
  const [minted, setMinted] = useState<NewApiKey | null>(null);
  const action = useAction();
  const created = async (key: NewApiKey) => {
    setMinted(key);
    await keys.reload();
  };
  const revoking = useConfirmed(async (key: ApiKey) => {
    await action.run(() => ok(api.DELETE('/v1/api-keys/{id}', { params: { path: { id: key.id } } })));
    await keys.reload();
  });
  return (
    <>
      <h1>API keys</h1>
      <p class="muted">
        Management keys use this API and sign in here; submission keys may only post to forms (optional on ingest).
      </p>
      {minted?.key && (
        <ShownOnce label={`New ${minted.type} key${minted.name ? ` “${minted.name}”` : ''}`} value={minted.key} />
      )}
      <CreateKey action={action} onCreated={created} />
      <ErrorBox error={action.error ?? keys.error} />
      {keys.loading && !keys.data && <Loading what="keys" />}
      {keys.data && <KeysTable keys={keys.data.data} onRevoke={revoking.ask} />}
      <RevokeConfirm revoking={revoking.asking} onConfirm={revoking.confirm} onCancel={revoking.cancel} />
    </>
  );
}

const KEY_TYPES = plainOptions<ApiKey['type']>(['submission', 'management']);

/** Creates a key of a type, with an optional name; the new key (shown once) is handed up. */
function CreateKey({ action, onCreated }: { action: Action; onCreated(key: NewApiKey): Promise<void> }) {
  const [type, setType] = useState<ApiKey['type']>('submission');
  const [name, setName] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const key = await action.run(() => ok(api.POST('/v1/api-keys', { body: { type, name: name.trim() || null } })));
    if (!key) return;
    void onCreated(key);
    setName('');
  };
  return (
    <form class="inline-form" onSubmit={submit}>
      <SelectField id="k-type" label="Type" value={type} options={KEY_TYPES} onValue={setType} />
      <TextField id="k-name" label="Name" grow maxLength={200} value={name} onValue={setName} />
      <SubmitRow pending={action.pending}>Create key</SubmitRow>
    </form>
  );
}

function KeysTable({ keys, onRevoke }: { keys: ApiKey[]; onRevoke(key: ApiKey): void }) {
  return (
    <Table
      label="API keys"
      reflow
      columns={['Type', 'Name', 'Prefix', 'Created', 'Created by', 'Last used', 'Revoked', ACTIONS_COLUMN]}
    >
      {keys.map((k) => (
        <tr key={k.id} class={k.revoked_at ? 'revoked' : ''}>
          <td>{k.type}</td>
          <td>
            {k.name ?? '—'}
            {k.id === session.value?.key_id && <span class="muted small"> (this session)</span>}
          </td>
          <td>
            <code>{k.prefix}…</code>
          </td>
          <td class="nowrap">{formatTime(k.created_at)}</td>
          <td>{k.created_by?.label ?? (k.created_by ? k.created_by.type : '—')}</td>
          <td class="nowrap">{formatTime(k.last_used_at)}</td>
          <td class="nowrap">{formatTime(k.revoked_at)}</td>
          <td>
            {!k.revoked_at && (
              <button type="button" class="link danger-text" onClick={() => onRevoke(k)}>
                Revoke <span class="sr-only">{k.name ?? k.prefix}</span>
              </button>
            )}
          </td>
        </tr>
      ))}
    </Table>
  );
}

function RevokeConfirm(props: { revoking: ApiKey | null; onConfirm(): void; onCancel(): void }) {
  const { revoking } = props;
  return (
    <Confirm
      open={revoking !== null}
      title="Revoke this key?"
      confirmLabel="Revoke key"
      onConfirm={props.onConfirm}
      onCancel={props.onCancel}
    >
      <p>
        <code>{revoking?.prefix}…</code> stops working at once
        {revoking?.id === session.value?.key_id ? ', and this console session ends with it' : ''}.
      </p>
    </Confirm>
  );
}

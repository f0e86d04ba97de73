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
import { limitWords, ProjectLimit, useProjects, useReach } from '../components/projects';

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
type KeyRole = NonNullable<ApiKey['role']>;
const KEY_ROLES = plainOptions<KeyRole>(['viewer', 'editor', 'admin']);

/**
 * Creates a key of a type, with an optional name (and for a management key its role, and for a viewer or editor the
 * projects it is limited to); the new key (shown once) is handed up.
 */
function CreateKey({ action, onCreated }: { action: Action; onCreated(key: NewApiKey): Promise<void> }) {
  const projects = useProjects();
  const [type, setType] = useState<ApiKey['type']>('submission');
  // The least a key can do to start with: an admin key is a choice, never a default.
  const [role, setRole] = useState<KeyRole>('viewer');
  const reach = useReach();
  const [name, setName] = useState('');
  const choosing = type === 'management' && role !== 'admin' && (projects.data?.length ?? 0) > 1;
  const submit = async (e: Event) => {
    e.preventDefault();
    const project_ids = reach.projectIds(choosing);
    if (project_ids === undefined) return;
    const body = { type, name: name.trim() || null, ...(type === 'management' ? { role, project_ids } : {}) };
    const key = await action.run(() => ok(api.POST('/v1/api-keys', { body })));
    if (!key) return;
    void onCreated(key);
    setName('');
    reach.reset();
  };
  return (
    <form class="stack" aria-label="Create a key" onSubmit={submit}>
      <div class="inline-form">
        <SelectField id="k-type" label="Type" value={type} options={KEY_TYPES} onValue={setType} />
        {type === 'management' && (
          <SelectField id="k-role" label="Role" value={role} options={KEY_ROLES} onValue={setRole} />
        )}
        <TextField id="k-name" label="Name" grow maxLength={200} value={name} onValue={setName} />
      </div>
      {choosing && <ProjectLimit id="key-reach" projects={projects.data} reach={reach} what="the key" />}
      <SubmitRow pending={action.pending}>Create key</SubmitRow>
    </form>
  );
}

function KeysTable({ keys, onRevoke }: { keys: ApiKey[]; onRevoke(key: ApiKey): void }) {
  const projects = useProjects();
  return (
    <Table
      label="API keys"
      reflow
      columns={['Type', 'Name', 'Prefix', 'Access', 'Created', 'Created by', 'Last used', 'Revoked', ACTIONS_COLUMN]}
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
          <td>{k.role ? `${k.role} · ${limitWords(projects.data, k.project_ids)}` : 'posts only'}</td>
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

import { useState } from 'preact/hooks';
import { api, session } from '../api';
import type { ApiKey, ListOf } from '../types';
import { Confirm, ErrorBox, Loading, ShownOnce, TableWrap, formatTime, useAction, useResource } from '../components/ui';

export function ApiKeysPage() {
  const keys = useResource(() => api<ListOf<ApiKey>>('GET', '/v1/api-keys'), []);
  const [type, setType] = useState<ApiKey['type']>('submission');
  const [name, setName] = useState('');
  const [minted, setMinted] = useState<ApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const action = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    const key = await action.run(() => api<ApiKey>('POST', '/v1/api-keys', { type, name: name.trim() || null }));
    if (!key) return;
    setMinted(key);
    setName('');
    await keys.reload();
  };
  const revoke = async () => {
    const key = revoking;
    setRevoking(null);
    if (!key) return;
    await action.run(() => api('DELETE', `/v1/api-keys/${key.id}`));
    await keys.reload();
  };
  return (
    <>
      <h1>API keys</h1>
      <p class="muted">
        Management keys use this API and sign in here; submission keys may only post to forms (optional on ingest).
      </p>
      {minted?.key && (
        <ShownOnce label={`New ${minted.type} key${minted.name ? ` “${minted.name}”` : ''}`} value={minted.key} />
      )}
      <form class="inline-form" onSubmit={create}>
        <div class="field">
          <label for="k-type">Type</label>
          <select id="k-type" value={type} onChange={(e) => setType(e.currentTarget.value as ApiKey['type'])}>
            <option value="submission">submission</option>
            <option value="management">management</option>
          </select>
        </div>
        <div class="field grow">
          <label for="k-name">Name</label>
          <input id="k-name" maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="actions">
          <button type="submit" disabled={action.pending}>
            Create key
          </button>
        </div>
      </form>
      <ErrorBox error={action.error ?? keys.error} />
      {keys.loading && !keys.data && <Loading what="keys" />}
      {keys.data && (
        <TableWrap label="API keys">
          <table>
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Revoked</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.data.map((k) => (
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
                  <td class="nowrap">{formatTime(k.last_used_at)}</td>
                  <td class="nowrap">{formatTime(k.revoked_at)}</td>
                  <td>
                    {!k.revoked_at && (
                      <button type="button" class="link danger-text" onClick={() => setRevoking(k)}>
                        Revoke <span class="sr-only">{k.name ?? k.prefix}</span>
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <Confirm
        open={revoking !== null}
        title="Revoke this key?"
        confirmLabel="Revoke key"
        onConfirm={revoke}
        onCancel={() => setRevoking(null)}
      >
        <p>
          <code>{revoking?.prefix}…</code> stops working at once
          {revoking?.id === session.value?.key_id ? ', and this console session ends with it' : ''}.
        </p>
      </Confirm>
    </>
  );
}

import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api';
import { ErrorBox, Loading, Table, TextField, formatTime, useAction } from '../components/ui';
import type { AuditEntry } from '../people';
import { useTitle } from '../title';

/** The audit log, newest first, a page at a time; filtered by action or actor; exported as NDJSON. */
export function AuditLogPage() {
  useTitle('Audit log');
  const [action, setAction] = useState('');
  const [actor, setActor] = useState('');
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const loading = useAction();
  const filters = () => ({
    ...(action.trim() ? { action: action.trim() } : {}),
    ...(actor.trim() ? { actor: actor.trim() } : {}),
  });
  const load = async (from: string | null) => {
    const page = await loading.run(() =>
      ok(
        api.GET('/v1/audit-log', { params: { query: { limit: 50, ...filters(), ...(from ? { cursor: from } : {}) } } }),
      ),
    );
    if (!page) return;
    setEntries((before) => (from && before ? [...before, ...page.data] : page.data));
    setCursor(page.next_cursor);
  };
  useEffect(() => {
    void load(null);
  }, []);
  const exportUrl = `/v1/audit-log/export.ndjson?${new URLSearchParams(filters()).toString()}`;
  return (
    <>
      <h1>Audit log</h1>
      <p class="muted">
        Every change and every export, who made it and from where. Entries cannot be changed or deleted.
      </p>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void load(null);
        }}
      >
        <TextField id="audit-action" label="Action" placeholder="form.updated" value={action} onValue={setAction} />
        <TextField id="audit-actor" label="Actor" placeholder="an e-mail or id" value={actor} onValue={setActor} />
        <button type="submit">Filter</button>
        <a class="button secondary" href={exportUrl} download="audit-log.ndjson">
          Export NDJSON
        </a>
      </form>
      <ErrorBox error={loading.error} />
      {entries === null && loading.pending && <Loading what="the audit log" />}
      {entries && <EntriesTable entries={entries} />}
      {cursor && (
        <button type="button" class="secondary" disabled={loading.pending} onClick={() => void load(cursor)}>
          Load more
        </button>
      )}
    </>
  );
}

function EntriesTable({ entries }: { entries: AuditEntry[] }) {
  return (
    <Table label="Audit log" columns={['Time', 'Actor', 'Action', 'Target', 'Details', 'From']}>
      {entries.map((e) => (
        <tr key={e.id}>
          <td class="nowrap">{formatTime(e.at)}</td>
          <td>
            {e.actor.label ?? e.actor.id ?? '—'} <span class="muted small">{e.actor.type.replace('_', ' ')}</span>
          </td>
          <td>
            <code>{e.action}</code>
          </td>
          <td>{e.target ? <code>{e.target.id ?? e.target.type}</code> : '—'}</td>
          <td class="small">{Object.keys(e.details).length ? JSON.stringify(e.details) : ''}</td>
          <td class="small">{e.ip ?? ''}</td>
        </tr>
      ))}
    </Table>
  );
}

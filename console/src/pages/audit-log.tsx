import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api';
import { ErrorBox, Loading, SelectField, Table, formatTime, useAction, useResource } from '../components/ui';
import type { AuditEntry } from '../people';
import { useTitle } from '../title';

/** The people and keys the log can be narrowed to: members by e-mail, keys by id (an entry names either). */
function usePeople() {
  return useResource(async () => {
    const [members, keys] = await Promise.all([ok(api.GET('/v1/members')), ok(api.GET('/v1/api-keys'))]);
    return [
      ['', 'Anyone'] as const,
      ...members.data.map((m) => [m.email, m.email] as const),
      ...keys.data
        .filter((k) => k.type === 'management')
        .map((k) => [k.id, `Key “${k.name ?? `${k.prefix}…`}”`] as const),
    ];
  }, []);
}

/** The audit log, newest first, a page at a time, each entry in words; filtered by person and action; exported. */
export function AuditLogPage() {
  useTitle('Audit log');
  const [action, setAction] = useState('');
  const [actor, setActor] = useState('');
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const loading = useAction();
  const people = usePeople();
  const actions = useResource(() => ok(api.GET('/v1/audit-log/actions')), []);
  const filters = (a = action, p = actor) => ({ ...(a ? { action: a } : {}), ...(p ? { actor: p } : {}) });
  const load = async (from: string | null, f = filters()) => {
    const page = await loading.run(() =>
      ok(api.GET('/v1/audit-log', { params: { query: { limit: 50, ...f, ...(from ? { cursor: from } : {}) } } })),
    );
    if (!page) return;
    setEntries((before) => (from && before ? [...before, ...page.data] : page.data));
    setCursor(page.next_cursor);
  };
  useEffect(() => {
    void load(null);
  }, []);
  const exportUrl = `/v1/audit-log/export.ndjson?${new URLSearchParams(filters()).toString()}`;
  const actionOptions = [
    ['', 'Any action'] as const,
    ...(actions.data?.data ?? []).map((a) => [a.action, a.label] as const),
  ];
  return (
    <>
      <h1>Audit log</h1>
      <p class="muted">
        Every change and every export, who made it and from where. Entries cannot be changed or deleted.
      </p>
      <div class="inline-form">
        <SelectField
          id="audit-actor"
          label="Person"
          value={actor}
          options={people.data ?? [['', 'Anyone']]}
          onValue={(value) => {
            setActor(value);
            void load(null, filters(action, value));
          }}
        />
        <SelectField
          id="audit-action"
          label="Action"
          value={action}
          options={actionOptions}
          onValue={(value) => {
            setAction(value);
            void load(null, filters(value, actor));
          }}
        />
        <a class="button secondary" href={exportUrl} download="audit-log.ndjson">
          Export NDJSON
        </a>
      </div>
      <ErrorBox error={loading.error ?? people.error ?? actions.error} />
      {entries === null && loading.pending && <Loading what="the audit log" />}
      {entries && entries.length === 0 && (
        <p class="empty">No entries{actor || action ? ' match these filters' : ''}.</p>
      )}
      {entries && entries.length > 0 && <EntriesTable entries={entries} />}
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
    <Table label="Audit log" reflow columns={['When', 'What', 'From', 'Details']}>
      {entries.map((e) => (
        <tr key={e.id}>
          <td class="nowrap">{formatTime(e.at)}</td>
          <td>{e.summary}</td>
          <td class="small">{e.ip ?? '—'}</td>
          <td class="small">
            {Object.keys(e.details).length > 0 && (
              <details>
                <summary>
                  <code>{e.action}</code>
                </summary>
                <pre class="wrap">{JSON.stringify(e.details, null, 2)}</pre>
              </details>
            )}
            {Object.keys(e.details).length === 0 && <code>{e.action}</code>}
          </td>
        </tr>
      ))}
    </Table>
  );
}

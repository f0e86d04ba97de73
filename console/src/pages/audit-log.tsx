import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api';
import { ErrorBox, Loading, SelectField, Table, formatTime, useAction, useResource } from '../components/ui';
import type { AuditEntry } from '../people';
import { ProjectSelect, useProjects } from '../components/projects';
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

type Filters = { action: string; actor: string; project_id: string };

/**
 * The audit log, newest first, a page at a time, each entry in words (an entry about a client's form names the client);
 * filtered by person, action and project; exported.
 */
export function AuditLogPage() {
  useTitle('Audit log');
  const [chosen, setChosen] = useState<Filters>({ action: '', actor: '', project_id: '' });
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const loading = useAction();
  const people = usePeople();
  const projects = useProjects();
  const actions = useResource(() => ok(api.GET('/v1/audit-log/actions')), []);
  // Only the filters chosen, so the query names no empty one.
  const filters = (f = chosen) =>
    Object.fromEntries(Object.entries(f).filter(([, value]) => value !== '')) as Partial<Filters>;
  const choose = (change: Partial<Filters>) => {
    const next = { ...chosen, ...change };
    setChosen(next);
    void load(null, filters(next));
  };
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
  const exportUrl = `/v1/audit-log/export.ndjson?${new URLSearchParams(filters() as Record<string, string>).toString()}`;
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
          value={chosen.actor}
          options={people.data ?? [['', 'Anyone']]}
          onValue={(actor) => choose({ actor })}
        />
        <SelectField
          id="audit-action"
          label="Action"
          value={chosen.action}
          options={actionOptions}
          onValue={(action) => choose({ action })}
        />
        <ProjectSelect
          id="audit-project"
          all="Any project"
          projects={projects.data}
          value={chosen.project_id}
          onValue={(project_id) => choose({ project_id })}
        />
        <a class="button secondary" href={exportUrl} download="audit-log.ndjson">
          Export NDJSON
        </a>
      </div>
      <ErrorBox error={loading.error ?? people.error ?? actions.error} />
      {entries === null && loading.pending && <Loading what="the audit log" />}
      {entries && entries.length === 0 && (
        <p class="empty">No entries{Object.keys(filters()).length > 0 ? ' match these filters' : ''}.</p>
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

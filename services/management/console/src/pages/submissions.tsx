import { useEffect, useRef, useState } from 'preact/hooks';
import { api, qs } from '../api';
import { location, navigate } from '../router';
import type { Form, PageOf, Submission } from '../types';
import {
  Confirm,
  ErrorBox,
  Link,
  Loading,
  StatusBadge,
  TableWrap,
  formatTime,
  useAction,
  useResource,
} from '../components/ui';
import { FormFrame } from '../components/form-nav';
import { Snippets } from '../components/snippets';

/** The filters as the URL holds them: status, since/until (dates, UTC), q, and the page cursor. */
function filtersFromUrl(query: URLSearchParams) {
  return {
    status: query.get('status') ?? '',
    since: query.get('since') ?? '',
    until: query.get('until') ?? '',
    q: query.get('q') ?? '',
    cursor: query.get('cursor') ?? '',
  };
}
type Filters = ReturnType<typeof filtersFromUrl>;

const dayAfter = (date: string) => new Date(Date.parse(`${date}T00:00:00.000Z`) + 86_400_000).toISOString();

/** The API's query for the filters (dates become UTC instants; `until` includes its whole day). */
function apiFilters(f: Filters) {
  return {
    status: f.status || undefined,
    since: f.since ? `${f.since}T00:00:00.000Z` : undefined,
    until: f.until ? dayAfter(f.until) : undefined,
    q: f.q || undefined,
  };
}

export function preview(payload: Record<string, string>): string {
  const text = Object.entries(payload)
    .slice(0, 3)
    .map(([k, v]) => `${k}: ${v}`)
    .join(' · ');
  return text.length > 120 ? `${text.slice(0, 119)}…` : text || '(no fields)';
}

export function SubmissionsPage({ formId }: { formId: string }) {
  return <FormFrame formId={formId}>{(form) => <Inbox form={form} />}</FormFrame>;
}

function Inbox({ form }: { form: Form }) {
  const filters = filtersFromUrl(location.value.query);
  const key = JSON.stringify(filters);
  const page = useResource(
    () =>
      api<PageOf<Submission>>(
        'GET',
        `/v1/forms/${form.id}/submissions${qs({ limit: 25, cursor: filters.cursor || undefined, ...apiFilters(filters) })}`,
      ),
    [form.id, key],
  );
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [confirmDelete, setConfirmDelete] = useState(false);
  const bulk = useAction();
  const [done, setDone] = useState('');
  // The filter controls edit a draft; Apply puts it in the URL, which is what the list shows.
  const [draft, setDraft] = useState(filters);
  // When the URL's filters change (Apply, back, a link), the controls follow them; not on the first render, whose
  // draft is already the URL's (an effect run then would undo a choice made before it ran).
  const shownKey = useRef(key);
  useEffect(() => {
    if (shownKey.current === key) return;
    shownKey.current = key;
    setDraft(filtersFromUrl(location.value.query));
  }, [key]);
  const edit = (name: keyof Filters) => (e: Event) =>
    setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement | HTMLSelectElement).value });
  const base = `/console/forms/${form.id}/submissions`;
  const filtered = Boolean(filters.status || filters.since || filters.until || filters.q);

  const apply = (e: Event) => {
    e.preventDefault();
    setSelected(new Set());
    setDone('');
    const { status, since, until, q } = draft;
    navigate(`${base}${qs({ status, since, until, q: q.trim() })}`);
  };
  const act = async (action: 'delete' | 'spam' | 'received') => {
    setConfirmDelete(false);
    const ids = [...selected];
    const result = await bulk.run(() =>
      api<{ done: string[]; not_found: string[] }>('POST', '/v1/submissions/bulk', { action, ids }),
    );
    if (!result) return;
    const verb = action === 'delete' ? 'Deleted' : action === 'spam' ? 'Marked as spam:' : 'Marked as not spam:';
    setSelected(new Set());
    await page.reload();
    setDone(`${verb} ${result.done.length} submission${result.done.length === 1 ? '' : 's'}.`);
  };
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  };
  const rows = page.data?.data ?? [];
  const exportQuery = qs(apiFilters(filters));

  return (
    <>
      <h2 class="sr-only">Submissions</h2>
      <form class="filters" onSubmit={apply} role="search" aria-label="Filter submissions">
        <div class="field">
          <label for="s-status">Show</label>
          <select id="s-status" name="status" value={draft.status} onChange={edit('status')}>
            <option value="">all</option>
            <option value="received">received</option>
            <option value="spam">spam</option>
          </select>
        </div>
        <div class="field">
          <label for="s-since">From (UTC)</label>
          <input id="s-since" name="since" type="date" value={draft.since} onInput={edit('since')} />
        </div>
        <div class="field">
          <label for="s-until">To (UTC)</label>
          <input id="s-until" name="until" type="date" value={draft.until} onInput={edit('until')} />
        </div>
        <div class="field grow">
          <label for="s-q">Search</label>
          <input
            id="s-q"
            name="q"
            type="search"
            maxLength={200}
            value={draft.q}
            onInput={edit('q')}
            placeholder="text in any field"
          />
        </div>
        <div class="actions">
          <button type="submit">Apply filters</button>
          {filtered && (
            <Link href={base} class="button secondary">
              Clear
            </Link>
          )}
        </div>
      </form>
      <div class="toolbar">
        <span class="muted">Export what the filters show:</span>
        <a class="button secondary" href={`/v1/forms/${form.id}/export.csv${exportQuery}`} download>
          Export CSV
        </a>
        <a class="button secondary" href={`/v1/forms/${form.id}/export.ndjson${exportQuery}`} download>
          Export NDJSON
        </a>
      </div>
      {selected.size > 0 && (
        <div class="toolbar bulk" role="group" aria-label="Selected submissions">
          <span>{selected.size} selected</span>
          <button type="button" class="secondary" disabled={bulk.pending} onClick={() => act('spam')}>
            Mark selected as spam
          </button>
          <button type="button" class="secondary" disabled={bulk.pending} onClick={() => act('received')}>
            Mark selected as not spam
          </button>
          <button type="button" class="danger" disabled={bulk.pending} onClick={() => setConfirmDelete(true)}>
            Delete selected
          </button>
        </div>
      )}
      <Confirm
        open={confirmDelete}
        title={`Delete ${selected.size} submission${selected.size === 1 ? '' : 's'}?`}
        confirmLabel="Delete"
        onConfirm={() => act('delete')}
        onCancel={() => setConfirmDelete(false)}
      >
        <p>Their files are deleted too. This cannot be undone.</p>
      </Confirm>
      <ErrorBox error={page.error ?? bulk.error} />
      {done && (
        <p class="ok" role="status">
          {done}
        </p>
      )}
      {page.loading && !page.data && <Loading what="submissions" />}
      {page.data && rows.length === 0 && !filtered && !filters.cursor && (
        <div class="empty">
          <h3>No submissions yet</h3>
          <p>Post to this form from your website to see submissions here.</p>
          <Snippets form={form} />
        </div>
      )}
      {page.data && rows.length === 0 && (filtered || filters.cursor) && (
        <p class="empty">No submissions match these filters.</p>
      )}
      {rows.length > 0 && (
        <TableWrap label="Submissions">
          <table class="inbox">
            <thead>
              <tr>
                <th scope="col">
                  <input
                    type="checkbox"
                    aria-label="Select all on this page"
                    checked={rows.every((r) => selected.has(r.id))}
                    onChange={(e) => setSelected(e.currentTarget.checked ? new Set(rows.map((r) => r.id)) : new Set())}
                  />
                </th>
                <th scope="col">Received</th>
                <th scope="col">Fields</th>
                <th scope="col" class="num">
                  Files
                </th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select submission of ${formatTime(s.received_at)}`}
                      checked={selected.has(s.id)}
                      onChange={(e) => toggle(s.id, e.currentTarget.checked)}
                    />
                  </td>
                  <td class="nowrap">
                    <Link href={`/console/submissions/${s.id}`}>{formatTime(s.received_at)}</Link>
                  </td>
                  <td class="preview">{preview(s.payload)}</td>
                  <td class="num">{s.files}</td>
                  <td>
                    <StatusBadge status={s.status} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <div class="pager">
        {filters.cursor && (
          <Link class="button secondary" href={`${base}${qs({ ...filters, cursor: undefined })}`}>
            First page
          </Link>
        )}
        {page.data?.next_cursor && (
          <Link class="button secondary" href={`${base}${qs({ ...filters, cursor: page.data.next_cursor })}`}>
            Next page
          </Link>
        )}
      </div>
    </>
  );
}

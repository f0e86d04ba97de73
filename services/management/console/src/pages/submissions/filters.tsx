import { useEffect, useRef, useState } from 'preact/hooks';
import type { operations } from '../../openapi';

/** The filters as the URL holds them: status, since/until (dates, UTC), q, and the page cursor. */
export function filtersFromUrl(query: Record<string, string | undefined>) {
  return {
    status: query['status'] ?? '',
    since: query['since'] ?? '',
    until: query['until'] ?? '',
    q: query['q'] ?? '',
    cursor: query['cursor'] ?? '',
  };
}
export type Filters = ReturnType<typeof filtersFromUrl>;

export const isFiltered = (f: Filters) => Boolean(f.status || f.since || f.until || f.q);

type Query = NonNullable<operations['listSubmissions']['parameters']['query']>;

const dayAfter = (date: string) => new Date(Date.parse(`${date}T00:00:00.000Z`) + 86_400_000).toISOString();

/** The API's query for the filters (dates become UTC instants; `until` includes its whole day). */
export function apiFilters(f: Filters) {
  return {
    // Whatever the URL says goes to the API, which explains a status it does not know.
    status: (f.status || undefined) as Query['status'],
    since: f.since ? `${f.since}T00:00:00.000Z` : undefined,
    until: f.until ? dayAfter(f.until) : undefined,
    q: f.q || undefined,
  };
}

/**
 * The filter controls edit a draft; Apply hands it over to be put in the URL, which is what the list shows. When the
 * URL's filters change (Apply, back, a link), the controls follow them; not on the first render, whose draft is
 * already the URL's (an effect run then would undo a choice made before it ran).
 */
function useDraft(filters: Filters) {
  const key = JSON.stringify(filters);
  const [draft, setDraft] = useState(filters);
  const shownKey = useRef(key);
  useEffect(() => {
    if (shownKey.current === key) return;
    shownKey.current = key;
    setDraft(filters);
  }, [key]);
  const edit = (name: keyof Filters) => (e: Event) =>
    setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement | HTMLSelectElement).value });
  return { draft, edit };
}

export function FilterForm(props: { filters: Filters; clearHref?: string; onApply(draft: Filters): void }) {
  const { draft, edit } = useDraft(props.filters);
  const submit = (e: Event) => {
    e.preventDefault();
    props.onApply(draft);
  };
  return (
    <form class="filters" onSubmit={submit} role="search" aria-label="Filter submissions">
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
        {props.clearHref && (
          <a href={props.clearHref} class="button secondary">
            Clear
          </a>
        )}
      </div>
    </form>
  );
}

import { useEffect, useRef, useState } from 'preact/hooks';
import type { operations } from '../../openapi';
import { setTimeZone, startOfDay, timeZone, zones } from '../../time';

export const PAGE_SIZES = [25, 50, 100] as const;

/**
 * The list as the URL holds it: the view (inbox or spam), since/until (days in the chosen time zone), q, the order,
 * the page size and the page cursor.
 */
export interface Filters {
  status: 'received' | 'spam';
  since: string;
  until: string;
  q: string;
  order: 'asc' | 'desc';
  limit: number;
  cursor: string;
  /** Which page the cursor is (1 without one): the list says where it is, "51–100 of about 3,000". */
  page: number;
}

export function filtersFromUrl(query: Record<string, string | undefined>): Filters {
  const limit = Number(query['limit']);
  return {
    status: query['status'] === 'spam' ? 'spam' : 'received',
    since: query['since'] ?? '',
    until: query['until'] ?? '',
    q: query['q'] ?? '',
    order: query['order'] === 'asc' ? 'asc' : 'desc',
    limit: (PAGE_SIZES as readonly number[]).includes(limit) ? limit : PAGE_SIZES[0],
    cursor: query['cursor'] ?? '',
    page: query['cursor'] ? Math.max(1, Math.floor(Number(query['page'])) || 1) : 1,
  };
}

/** The URL's query for a list (defaults left out, so the plain inbox URL stays plain). */
export function urlQuery(f: Partial<Filters>) {
  return {
    status: f.status === 'spam' ? 'spam' : undefined,
    since: f.since,
    until: f.until,
    q: f.q?.trim(),
    order: f.order === 'asc' ? 'asc' : undefined,
    limit: f.limit && f.limit !== PAGE_SIZES[0] ? f.limit : undefined,
    cursor: f.cursor,
    page: f.cursor && f.page && f.page > 1 ? f.page : undefined,
    // Days are days in a zone: a link with them carries the zone they were chosen in.
    tz: f.since || f.until ? timeZone.value : undefined,
  };
}

/** A link's zone (`tz`, which its days were chosen in) becomes the zone this view shows and filters in. */
export function useLinkZone(query: Record<string, string | undefined>) {
  const zone = query['tz'];
  useEffect(() => {
    if (zone && zone !== timeZone.value) setTimeZone(zone, false);
  }, [zone]);
}

/** Whether anything narrows the view beyond inbox or spam. */
export const isFiltered = (f: Filters) => Boolean(f.since || f.until || f.q);

type Query = NonNullable<operations['listSubmissions']['parameters']['query']>;

/** The API's filter for the list: its days become instants in the chosen zone (`until` includes its whole day). */
export function apiFilters(f: Filters) {
  return {
    status: f.status as NonNullable<Query['status']>,
    since: f.since ? startOfDay(f.since, timeZone.value) : undefined,
    until: f.until ? startOfDay(f.until, timeZone.value, 1) : undefined,
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

/** Which time zone dates are shown and filtered in (the browser's unless the owner picks another). */
export function ZoneSelect() {
  return (
    <div class="field">
      <label for="s-zone">Time zone</label>
      <select id="s-zone" value={timeZone.value} onChange={(e) => setTimeZone(e.currentTarget.value)}>
        {zones().map((z) => (
          <option key={z} value={z}>
            {z}
          </option>
        ))}
      </select>
    </div>
  );
}

export function FilterForm(props: { filters: Filters; clearHref?: string; onApply(draft: Filters): void }) {
  const { draft, edit } = useDraft(props.filters);
  const submit = (e: Event) => {
    e.preventDefault();
    props.onApply(draft);
  };
  const zone = timeZone.value;
  return (
    <form class="filters" onSubmit={submit} role="search" aria-label="Filter submissions">
      <div class="field">
        <label for="s-since">From ({zone})</label>
        <input id="s-since" name="since" type="date" value={draft.since} onInput={edit('since')} />
      </div>
      <div class="field">
        <label for="s-until">To ({zone})</label>
        <input id="s-until" name="until" type="date" value={draft.until} onInput={edit('until')} />
      </div>
      <ZoneSelect />
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

import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api';
import type { Form, Submission } from '../api-types';
import { restoredFromTrash } from '../flash';
import { qs } from '../location';
import { timeZone } from '../time';
import { ErrorBox, Loading, useAction, useResource } from '../components/ui';
import { FormFrame } from '../components/form-nav';
import { Snippets } from '../components/snippets';
import { SpamModelPanel, marksTeach } from '../components/spam-model';
import {
  BulkActions,
  submissionCount,
  useSelection,
  type BulkAction,
  type Selection,
  type Total,
} from './submissions/bulk';
import { ColumnPicker, useColumns } from './submissions/columns';
import {
  FilterForm,
  PAGE_SIZES,
  apiFilters,
  filtersFromUrl,
  useLinkZone,
  isFiltered,
  urlQuery,
  type Filters,
} from './submissions/filters';
import { InboxTable } from './submissions/table';
import { ShortcutHelp, useInboxKeys } from './submissions/keys';
import { SavedViews } from './submissions/views';
import type { ExportLinkSet } from './submissions/bulk';

export function SubmissionsPage({ id }: { id: string }) {
  return (
    <FormFrame formId={id} view="Submissions">
      {(form) => <Inbox form={form} />}
    </FormFrame>
  );
}

/** One page of the form's submissions, as the URL's filters, order, page size and cursor choose it, with the total. */
function useSubmissions(formId: string, filters: Filters) {
  return useResource(() => {
    const query = {
      limit: filters.limit,
      cursor: filters.cursor || undefined,
      order: filters.order,
      total: true,
      ...apiFilters(filters),
    };
    return ok(api.GET('/v1/forms/{id}/submissions', { params: { path: { id: formId }, query } }));
  }, [formId, JSON.stringify(apiFilters(filters)), filters.limit, filters.cursor, filters.order]);
}

const BULK_DONE = {
  delete: 'Moved to the trash:',
  spam: 'Marked as spam:',
  received: 'Marked as not spam:',
  read: 'Marked as read:',
  unread: 'Marked as unread:',
};

/** Runs a bulk action on `ids`, else on the selection: its ids, or every submission the filter matches. */
async function runBulk(formId: string, selection: Selection, filters: Filters, action: BulkAction, ids?: string[]) {
  if (!ids && selection.all) {
    const filter = apiFilters(filters);
    const body = { action, filter };
    const result = await ok(api.POST('/v1/forms/{id}/submissions/bulk', { params: { path: { id: formId } }, body }));
    return result.done; // a count: the filter's submissions are not listed
  }
  const chosen = ids ?? [...selection.selected];
  return (await ok(api.POST('/v1/submissions/bulk', { body: { action, ids: chosen } }))).done;
}

/**
 * The inbox's bulk actions on its selection, what the last one did, and Undo for submissions it moved to the trash by
 * id (a whole filter's are not listed back); a submission restored from its own page's Undo reloads the list.
 */
function useBulk(formId: string, filters: Filters, selection: Selection, page: { reload(): Promise<void> }) {
  const { url } = useLocation();
  const bulk = useAction();
  const [done, setDone] = useState('');
  const [trashed, setTrashed] = useState<string[]>([]);
  useEffect(() => {
    setDone('');
    setTrashed([]);
  }, [url]);
  useEffect(() => void page.reload(), [restoredFromTrash.value]);
  const act = async (action: BulkAction, ids?: string[]) => {
    const result = await bulk.run(() => runBulk(formId, selection, filters, action, ids));
    if (result === undefined) return;
    const n = typeof result === 'number' ? result : result.length;
    selection.clear();
    setTrashed(action === 'delete' && typeof result !== 'number' ? result : []);
    await page.reload();
    setDone(`${BULK_DONE[action]} ${n.toLocaleString()} submission${n === 1 ? '' : 's'}.`);
  };
  const undo = async () => {
    const restored = await bulk.run(() => ok(api.POST('/v1/submissions/restore', { body: { ids: trashed } })));
    if (!restored) return;
    setTrashed([]);
    await page.reload();
    setDone(`Restored ${restored.done.length.toLocaleString()} from the trash.`);
  };
  /** The `e` shortcut: these submissions to spam (in the spam view: out of it). */
  const markSpam = (ids: string[]) => act(filters.status === 'spam' ? 'received' : 'spam', ids);
  return { bulk, done, trashed, act, undo, markSpam };
}

/**
 * The inbox (or the spam view): filters, order and page size kept in the URL, the total they match, exports of
 * what they show, bulk actions on a selection of what is shown (or on every match), pages forwards and back.
 */
function Inbox({ form }: { form: Form }) {
  const { query, url, route } = useLocation();
  useLinkZone(query);
  const filters = filtersFromUrl(query);
  const page = useSubmissions(form.id, filters);
  const selection = useSelection();
  const { bulk, done, trashed, act, undo, markSpam } = useBulk(form.id, filters, selection, page);
  const columns = useColumns(form.id, page.data?.data);
  const base = `/console/forms/${form.id}/submissions`;
  const go = (f: Partial<Filters>) => route(`${base}${qs(urlQuery({ ...filters, cursor: '', ...f }))}`);
  // The selection belongs to what is shown: another page, filter, order or view starts without one.
  useEffect(() => selection.clear(), [url]);
  const rows = page.data?.data;
  const total: Total =
    page.data?.total === undefined
      ? undefined
      : { count: page.data.total, estimate: page.data.total_is_estimate === true };
  const exports = exportLinks(form.id, filters);
  return (
    <div class="inbox-view">
      <ViewTabs base={base} filters={filters} formId={form.id} />
      <SavedViews formId={form.id} base={base} filters={filters} />
      {filters.status === 'spam' && <SpamModelPanel form={form} />}
      <FilterForm
        filters={filters}
        clearHref={isFiltered(filters) ? `${base}${qs(urlQuery({ status: filters.status }))}` : undefined}
        onApply={(d) => go({ since: d.since, until: d.until, q: d.q })}
      />
      <ListControls filters={filters} total={total} rows={rows?.length ?? 0} onChange={go}>
        <ColumnPicker columns={columns} />
      </ListControls>
      <ExportLinks {...exports} />
      <BulkActions
        selection={selection}
        total={total}
        pageRows={rows?.length ?? 0}
        spamView={filters.status === 'spam'}
        teaches={marksTeach(form)}
        pending={bulk.pending}
        exportLinks={exports}
        onAct={act}
      />
      <ErrorBox error={page.error ?? bulk.error} />
      {done && (
        <p class="ok" role="status">
          {done}
          {trashed.length > 0 && (
            <>
              {' '}
              <button type="button" class="link" disabled={bulk.pending} onClick={() => void undo()}>
                Undo
              </button>
            </>
          )}
        </p>
      )}
      {page.loading && !page.data && <Loading what="submissions" />}
      {rows && (
        <InboxContent form={form} rows={rows} filters={filters}>
          <InboxTable
            rows={rows}
            selection={selection}
            fields={columns.shown}
            order={filters.order}
            spamView={filters.status === 'spam'}
            listQuery={qs({ ...urlQuery({ ...filters, cursor: '', limit: undefined }) })}
          />
        </InboxContent>
      )}
      <InboxKeys onSpam={markSpam} selection={selection} />
      <Pager
        base={base}
        filters={filters}
        next={page.data?.next_cursor ?? null}
        prev={page.data?.prev_cursor ?? null}
      />
    </div>
  );
}

/** The inbox's keyboard shortcuts, and the link (and `?`) that lists them. */
function InboxKeys(props: { onSpam(ids: string[]): void; selection: Selection }) {
  const [help, setHelp] = useState(false);
  useInboxKeys({ onSpam: props.onSpam, onHelp: () => setHelp(true), selectedIds: () => [...props.selection.selected] });
  return (
    <>
      <p class="muted small">
        <button type="button" class="link" onClick={() => setHelp(true)}>
          Keyboard shortcuts
        </button>{' '}
        (<kbd>?</kbd>)
      </p>
      <ShortcutHelp open={help} onClose={() => setHelp(false)} />
    </>
  );
}

/** Inbox and Spam, side by side: spam is kept apart from what the owner reads; then the form's deleted ones. */
function ViewTabs({ base, filters, formId }: { base: string; filters: Filters; formId: string }) {
  const views = [
    { status: 'received', label: 'Inbox' },
    { status: 'spam', label: 'Spam' },
  ] as const;
  return (
    <nav aria-label="Submission views" class="tabs views">
      <ul>
        {views.map((v) => (
          <li key={v.status}>
            <a
              href={`${base}${qs(urlQuery({ ...filters, status: v.status, cursor: '' }))}`}
              aria-current={filters.status === v.status ? 'page' : undefined}
            >
              {v.label}
            </a>
          </li>
        ))}
        <li>
          <a href={`/console/forms/trash${qs({ form: formId })}`}>Trash</a>
        </li>
      </ul>
    </nav>
  );
}

/** How many match (about how many, beyond 10,000), and the order, page size and columns of the list. */
/** Where the page is in the list, when it shows a part of it: "51–100 of " (nothing for a list on one page). */
function position(filters: Filters, rows: number, total: Total): string {
  if (total === undefined || rows === 0 || (filters.page === 1 && rows >= total.count)) return '';
  const from = (filters.page - 1) * filters.limit + 1;
  return `${from.toLocaleString('en')}–${(from + rows - 1).toLocaleString('en')} of `;
}

function ListControls(props: {
  filters: Filters;
  total: Total;
  rows: number;
  onChange(f: Partial<Filters>): void;
  children: preact.ComponentChildren;
}) {
  const { filters, total } = props;
  const what = filters.status === 'spam' ? 'spam' : isFiltered(filters) ? 'matching' : 'in the inbox';
  return (
    <div class="toolbar list-controls">
      <p class="count" aria-live="polite">
        {total === undefined ? '' : `${position(filters, props.rows, total)}${submissionCount(total)} ${what}`}
      </p>
      <label for="s-order">Order</label>
      <select
        id="s-order"
        value={filters.order}
        onChange={(e) => props.onChange({ order: e.currentTarget.value as Filters['order'] })}
      >
        <option value="desc">Newest first</option>
        <option value="asc">Oldest first</option>
      </select>
      <label for="s-limit">Per page</label>
      <select
        id="s-limit"
        value={String(filters.limit)}
        onChange={(e) => props.onChange({ limit: Number(e.currentTarget.value) })}
      >
        {PAGE_SIZES.map((n) => (
          <option key={n} value={String(n)}>
            {n}
          </option>
        ))}
      </select>
      {props.children}
    </div>
  );
}

/** The exports of what the filters show: Excel (times in the console's zone), CSV marked as UTF-8 for spreadsheets, NDJSON. */
function exportLinks(formId: string, filters: Filters): ExportLinkSet {
  const query = apiFilters(filters);
  const base = `/v1/forms/${formId}/export`;
  return {
    xlsx: `${base}.xlsx${qs({ ...query, tz: timeZone.value })}`,
    csv: `${base}.csv${qs({ ...query, bom: 'true' })}`,
    ndjson: `${base}.ndjson${qs(query)}`,
  };
}

function ExportLinks({ xlsx, csv, ndjson }: ExportLinkSet) {
  return (
    <div class="toolbar">
      <span class="muted">Export what the filters show:</span>
      <a class="button secondary" href={xlsx} download>
        Export Excel
      </a>
      <a class="button secondary" href={csv} download>
        Export CSV
      </a>
      <a class="button secondary" href={ndjson} download>
        Export NDJSON
      </a>
    </div>
  );
}

/** The page's submissions, or why there are none: none yet (with the snippets to post some), or none that match. */
function InboxContent(props: { form: Form; rows: Submission[]; filters: Filters; children: preact.ComponentChildren }) {
  const { form, rows, filters } = props;
  if (rows.length > 0) return <>{props.children}</>;
  if (isFiltered(filters) || filters.cursor) return <p class="empty">No submissions match these filters.</p>;
  if (filters.status === 'spam') return <p class="empty">No spam. Posts caught as spam are kept here.</p>;
  return (
    <div class="empty">
      <h3>No submissions yet</h3>
      <p>Post to this form from your website to see submissions here.</p>
      <Snippets form={form} />
    </div>
  );
}

function Pager(props: { base: string; filters: Filters; next: string | null; prev: string | null }) {
  const { base, filters, next, prev } = props;
  if (next === null && prev === null) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {prev !== null && (
        <a
          class="button secondary"
          href={`${base}${qs(urlQuery({ ...filters, cursor: prev, page: filters.page - 1 }))}`}
        >
          Previous page
        </a>
      )}
      {next && (
        <a
          class="button secondary"
          href={`${base}${qs(urlQuery({ ...filters, cursor: next, page: filters.page + 1 }))}`}
        >
          Next page
        </a>
      )}
    </nav>
  );
}

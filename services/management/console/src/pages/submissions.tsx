import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api';
import type { Form, Submission } from '../api-types';
import { qs } from '../location';
import { ErrorBox, Loading, useAction, useResource } from '../components/ui';
import { FormFrame } from '../components/form-nav';
import { Snippets } from '../components/snippets';
import { BulkActions, useSelection, type Selection } from './submissions/bulk';
import { FilterForm, apiFilters, filtersFromUrl, isFiltered, type Filters } from './submissions/filters';
import { InboxTable } from './submissions/table';

export function SubmissionsPage({ id }: { id: string }) {
  return <FormFrame formId={id}>{(form) => <Inbox form={form} />}</FormFrame>;
}

const PAGE_SIZE = 25;

/** One page of the form's submissions, as the URL's filters and cursor choose it. */
function useSubmissions(formId: string, filters: Filters) {
  return useResource(() => {
    const query = { limit: PAGE_SIZE, cursor: filters.cursor || undefined, ...apiFilters(filters) };
    return ok(api.GET('/v1/forms/{id}/submissions', { params: { path: { id: formId }, query } }));
  }, [formId, JSON.stringify(filters)]);
}

const BULK_DONE = { delete: 'Deleted', spam: 'Marked as spam:', received: 'Marked as not spam:' };

/** The inbox: filters kept in the URL, exports of what they show, bulk actions on a selection, pages of 25. */
function Inbox({ form }: { form: Form }) {
  const { query, route } = useLocation();
  const filters = filtersFromUrl(query);
  const page = useSubmissions(form.id, filters);
  const selection = useSelection();
  const bulk = useAction();
  const [done, setDone] = useState('');
  const base = `/console/forms/${form.id}/submissions`;
  const apply = ({ status, since, until, q }: Filters) => {
    selection.set(new Set());
    setDone('');
    route(`${base}${qs({ status, since, until, q: q.trim() })}`);
  };
  const act = async (action: keyof typeof BULK_DONE) => {
    const ids = [...selection.selected];
    const result = await bulk.run(() => ok(api.POST('/v1/submissions/bulk', { body: { action, ids } })));
    if (!result) return;
    selection.set(new Set());
    await page.reload();
    setDone(`${BULK_DONE[action]} ${result.done.length} submission${result.done.length === 1 ? '' : 's'}.`);
  };
  const rows = page.data?.data;
  return (
    <>
      <h2 class="sr-only">Submissions</h2>
      <FilterForm filters={filters} clearHref={isFiltered(filters) ? base : undefined} onApply={apply} />
      <ExportLinks formId={form.id} filters={filters} />
      <BulkActions count={selection.selected.size} pending={bulk.pending} onAct={act} />
      <ErrorBox error={page.error ?? bulk.error} />
      {done && (
        <p class="ok" role="status">
          {done}
        </p>
      )}
      {page.loading && !page.data && <Loading what="submissions" />}
      {rows && <InboxContent form={form} rows={rows} filters={filters} selection={selection} />}
      <Pager base={base} filters={filters} next={page.data?.next_cursor ?? null} />
    </>
  );
}

function ExportLinks({ formId, filters }: { formId: string; filters: Filters }) {
  const query = qs(apiFilters(filters));
  return (
    <div class="toolbar">
      <span class="muted">Export what the filters show:</span>
      <a class="button secondary" href={`/v1/forms/${formId}/export.csv${query}`} download>
        Export CSV
      </a>
      <a class="button secondary" href={`/v1/forms/${formId}/export.ndjson${query}`} download>
        Export NDJSON
      </a>
    </div>
  );
}

/** The page's submissions, or why there are none: none yet (with the snippets to post some), or none that match. */
function InboxContent(props: { form: Form; rows: Submission[]; filters: Filters; selection: Selection }) {
  const { form, rows, filters } = props;
  if (rows.length > 0) return <InboxTable rows={rows} selection={props.selection} />;
  if (isFiltered(filters) || filters.cursor) return <p class="empty">No submissions match these filters.</p>;
  return (
    <div class="empty">
      <h3>No submissions yet</h3>
      <p>Post to this form from your website to see submissions here.</p>
      <Snippets form={form} />
    </div>
  );
}

function Pager({ base, filters, next }: { base: string; filters: Filters; next: string | null }) {
  return (
    <div class="pager">
      {filters.cursor && (
        <a class="button secondary" href={`${base}${qs({ ...filters, cursor: undefined })}`}>
          First page
        </a>
      )}
      {next && (
        <a class="button secondary" href={`${base}${qs({ ...filters, cursor: next })}`}>
          Next page
        </a>
      )}
    </div>
  );
}

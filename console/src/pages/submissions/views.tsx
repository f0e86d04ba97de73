import { useState } from 'preact/hooks';
import { api, ok } from '../../api';
import { qs } from '../../location';
import { ErrorBox, useAction, useResource } from '../../components/ui';
import { may } from '../../people';
import { urlQuery, type Filters } from './filters';

/**
 * The form's saved views (named filters, shared by everyone in the account) as links, and (for an editor) saving the
 * filters shown under a name and deleting a view.
 */
export function SavedViews(props: { formId: string; base: string; filters: Filters }) {
  const { formId, base, filters } = props;
  const views = useResource(() => ok(api.GET('/v1/forms/{id}/views', { params: { path: { id: formId } } })), [formId]);
  const action = useAction();
  const [naming, setNaming] = useState(false);
  const [name, setName] = useState('');
  const current = {
    ...(filters.status === 'spam' ? { status: 'spam' as const } : {}),
    ...(filters.since ? { since: filters.since } : {}),
    ...(filters.until ? { until: filters.until } : {}),
    ...(filters.q.trim() ? { q: filters.q.trim() } : {}),
    ...(filters.order === 'asc' ? { order: 'asc' as const } : {}),
  };
  const save = async (e: Event) => {
    e.preventDefault();
    const body = { name: name.trim(), filters: current };
    if (await action.run(() => ok(api.POST('/v1/forms/{id}/views', { params: { path: { id: formId } }, body })))) {
      setNaming(false);
      setName('');
      await views.reload();
    }
  };
  const remove = async (id: string) => {
    await action.run(() => ok(api.DELETE('/v1/views/{id}', { params: { path: { id } } })));
    await views.reload();
  };
  const list = views.data?.data ?? [];
  if (list.length === 0 && !may('saveView')) return null;
  return (
    <nav class="saved-views" aria-label="Saved views">
      <span class="muted small">Views:</span>
      {list.length === 0 && <span class="muted small">none saved yet</span>}
      {list.map((v) => (
        <span key={v.id} class="saved-view">
          <a href={`${base}${qs(urlQuery({ ...v.filters, limit: filters.limit }))}`}>{v.name}</a>
          {may('deleteSavedView') && (
            <button type="button" class="link danger-text" disabled={action.pending} onClick={() => void remove(v.id)}>
              <span aria-hidden="true">×</span>
              <span class="sr-only">Delete the view {v.name}</span>
            </button>
          )}
        </span>
      ))}
      {may('saveView') && !naming && (
        <button type="button" class="link" onClick={() => setNaming(true)}>
          Save this view
        </button>
      )}
      {naming && (
        <form class="inline-form" onSubmit={(e) => void save(e)} aria-label="Save this view">
          <label for="view-name">View name</label>
          <input id="view-name" required maxLength={80} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <button type="submit" disabled={action.pending}>
            Save view
          </button>
          <button type="button" class="secondary" onClick={() => setNaming(false)}>
            Cancel
          </button>
        </form>
      )}
      <ErrorBox error={action.error ?? views.error} />
    </nav>
  );
}

import { useState } from 'preact/hooks';
import { api, ok } from '../api';
import type { Form } from '../api-types';
import {
  ACTIONS_COLUMN,
  Confirm,
  ErrorBox,
  Loading,
  Table,
  formatTime,
  useAction,
  useResource,
} from '../components/ui';
import { may } from '../people';
import { formTitle } from '../components/projects';
import { useTitle } from '../title';
import { SubmissionTrash } from './trash/submissions';

/**
 * The trash: the forms in it (when each went, when it is deleted for good, and for an editor Restore and Delete for
 * good), then the submissions in it.
 */
export function TrashPage() {
  useTitle('Trash');
  const trash = useResource(() => ok(api.GET('/v1/forms', { params: { query: { deleted: true, limit: 100 } } })), []);
  const action = useAction();
  const [done, setDone] = useState('');
  const [forGood, setForGood] = useState<Form | null>(null);
  const restore = async (form: Form) => {
    if (await action.run(() => ok(api.POST('/v1/forms/{id}/restore', { params: { path: { id: form.id } } }))))
      setDone(`“${formTitle(form)}” restored with its submissions; it accepts posts again.`);
    await trash.reload();
  };
  const remove = async (form: Form) => {
    setForGood(null);
    const path = { params: { path: { id: form.id }, query: { permanently: true } } };
    if (await action.run(async () => (await ok(api.DELETE('/v1/forms/{id}', path)), true)))
      setDone(`“${formTitle(form)}” deleted for good, with its submissions and files.`);
    await trash.reload();
  };
  return (
    <>
      <p class="crumbs">
        <a href="/console/forms">Forms</a> /
      </p>
      <h1>Trash</h1>
      <h2>Forms</h2>
      <p class="muted">
        Deleted forms wait here, with their submissions, files and webhooks, until they are deleted for good.
      </p>
      {done && (
        <p class="ok" role="status">
          {done}
        </p>
      )}
      <ErrorBox error={trash.error ?? action.error} />
      {trash.loading && !trash.data && <Loading what="the trash" />}
      {trash.data && trash.data.data.length === 0 && <p class="empty">No deleted forms.</p>}
      {trash.data && trash.data.data.length > 0 && (
        <TrashTable forms={trash.data.data} pending={action.pending} onRestore={restore} onForGood={setForGood} />
      )}
      <Confirm
        open={forGood !== null}
        title={`Delete “${forGood ? formTitle(forGood) : ''}” for good?`}
        confirmLabel="Delete for good"
        onConfirm={() => forGood && void remove(forGood)}
        onCancel={() => setForGood(null)}
      >
        <p>Its submissions and their files are deleted with it. This cannot be undone.</p>
      </Confirm>
      <SubmissionTrash />
    </>
  );
}

/** The forms in the trash, each named with its client in a column of its own when any is a client's. */
function TrashTable(props: {
  forms: Form[];
  pending: boolean;
  onRestore(form: Form): Promise<void>;
  onForGood(form: Form): void;
}) {
  const clients = props.forms.some((f) => f.project);
  const columns = ['Name', ...(clients ? ['Project'] : []), 'Deleted', 'Deleted for good', ACTIONS_COLUMN];
  return (
    <Table label="Forms in the trash" reflow columns={columns}>
      {props.forms.map((f) => (
        <tr key={f.id}>
          <th scope="row">{f.name}</th>
          {clients && <td>{f.project?.name ?? ''}</td>}
          <td class="nowrap">{formatTime(f.deleted_at)}</td>
          <td class="nowrap">{formatTime(f.purge_at)}</td>
          <td class="row-actions">
            {may('restoreForm') && (
              <button type="button" class="link" disabled={props.pending} onClick={() => void props.onRestore(f)}>
                Restore <span class="sr-only">{formTitle(f)}</span>
              </button>
            )}
            {may('deleteForm') && (
              <button
                type="button"
                class="link danger-text"
                disabled={props.pending}
                onClick={() => props.onForGood(f)}
              >
                Delete for good <span class="sr-only">{formTitle(f)}</span>
              </button>
            )}
          </td>
        </tr>
      ))}
    </Table>
  );
}

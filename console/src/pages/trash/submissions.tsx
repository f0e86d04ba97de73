import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ok } from '../../api';
import type { ResponseBody } from '../../api-types';
import {
  ACTIONS_COLUMN,
  Confirm,
  ErrorBox,
  Loading,
  Table,
  formatTime,
  useAction,
  useResource,
} from '../../components/ui';
import { ProjectSelect, formTitle, useProjects } from '../../components/projects';
import { qs } from '../../location';
import { may } from '../../people';

type Trashed = ResponseBody<'listAccountSubmissions'>['data'][number];

/** A submission as one line names it: its first values, cut short. */
export function submissionSummary(payload: Record<string, string>): string {
  const text = Object.values(payload)
    .map((v) => v.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .slice(0, 3)
    .join(' · ');
  return text.length > 90 ? `${text.slice(0, 89)}…` : text || '(no fields)';
}

/**
 * The submissions in the trash, most recently deleted first, across the forms the person sees (or one form's, from
 * the inbox's Trash link, `?form=`, or one client's): each named with its form and client, with Restore and Delete
 * now for an editor.
 */
export function SubmissionTrash() {
  const { query } = useLocation();
  const formId = query['form'] || undefined;
  const projectId = query['project'] || undefined;
  const [pages, setPages] = useState<string[]>([]);
  const trash = useResource(async () => {
    const filter = { deleted: true as const, form_id: formId, project_id: projectId, limit: 50 };
    const first = await ok(api.GET('/v1/submissions', { params: { query: filter } }));
    let rows = first.data;
    let next = first.next_cursor;
    for (const cursor of pages) {
      if (!next) break;
      const more = await ok(api.GET('/v1/submissions', { params: { query: { ...filter, cursor } } }));
      rows = [...rows, ...more.data];
      next = more.next_cursor;
    }
    return { rows, next };
  }, [formId, projectId, pages.length]);
  const action = useAction();
  const [done, setDone] = useState('');
  const [forGood, setForGood] = useState<Trashed | null>(null);
  const restore = async (s: Trashed) => {
    const body = { ids: [s.id] };
    const result = await action.run(() => ok(api.POST('/v1/submissions/restore', { body })));
    const where = formTitle({ name: s.form.name, project: s.project });
    if (result) setDone(result.done.length ? `Restored to “${where}”.` : 'It was no longer in the trash.');
    await trash.reload();
  };
  const remove = async (s: Trashed) => {
    setForGood(null);
    const path = { params: { path: { id: s.id }, query: { permanently: true } } };
    if (await action.run(async () => (await ok(api.DELETE('/v1/submissions/{id}', path)), true)))
      setDone('Deleted for good, with its files.');
    await trash.reload();
  };
  const shownForm = formId ? trash.data?.rows[0]?.form : undefined;
  return (
    <section aria-labelledby="trash-submissions">
      <h2 id="trash-submissions">Submissions</h2>
      <p class="muted">
        Deleted submissions wait here with their files until they are deleted for good. Those of a deleted form come
        back with their form.
      </p>
      <TrashFilter formId={formId} projectId={projectId} formName={shownForm?.name} />
      {done && (
        <p class="ok" role="status">
          {done}
        </p>
      )}
      <ErrorBox error={trash.error ?? action.error} />
      {trash.loading && !trash.data && <Loading what="deleted submissions" />}
      {trash.data && trash.data.rows.length === 0 && <p class="empty">No deleted submissions.</p>}
      {trash.data && trash.data.rows.length > 0 && (
        <TrashedTable rows={trash.data.rows} pending={action.pending} onRestore={restore} onForGood={setForGood} />
      )}
      {trash.data?.next && (
        <button type="button" class="secondary" onClick={() => setPages([...pages, trash.data!.next!])}>
          Show more
        </button>
      )}
      <Confirm
        open={forGood !== null}
        title="Delete this submission for good?"
        confirmLabel="Delete for good"
        onConfirm={() => forGood && void remove(forGood)}
        onCancel={() => setForGood(null)}
      >
        <p>
          {forGood ? `“${submissionSummary(forGood.payload)}” ` : ''}and its files are deleted now. This cannot be
          undone.
        </p>
      </Confirm>
    </section>
  );
}

/** Whose deleted submissions are shown: one form's (with the way back to all), or a client's chosen here. */
function TrashFilter(props: { formId?: string; projectId?: string; formName?: string }) {
  const { route } = useLocation();
  const projects = useProjects();
  const { formId, projectId } = props;
  const shownForm = props.formName === undefined ? undefined : { name: props.formName };
  return (
    <>
      {formId && (
        <p>
          Only {shownForm ? `“${shownForm.name}”` : 'one form'}’s.{' '}
          <a href={`/console/forms/trash${qs({ project: projectId })}`}>Show every form’s</a>
        </p>
      )}
      {!formId && (
        <ProjectSelect
          id="trash-project"
          label="Client"
          projects={projects.data}
          value={projectId ?? ''}
          all="All clients"
          onValue={(v) => route(`/console/forms/trash${qs({ project: v })}`)}
        />
      )}
    </>
  );
}

function TrashedTable(props: {
  rows: Trashed[];
  pending: boolean;
  onRestore(s: Trashed): Promise<void>;
  onForGood(s: Trashed): void;
}) {
  const clients = props.rows.some((s) => s.project);
  const columns = ['Submission', 'Form', ...(clients ? ['Client'] : []), 'Deleted', 'Deleted for good'];
  return (
    <Table label="Submissions in the trash" reflow columns={[...columns, ACTIONS_COLUMN]}>
      {props.rows.map((s) => {
        const summary = submissionSummary(s.payload);
        return (
          <tr key={s.id}>
            <th scope="row">
              <bdi>{summary}</bdi>
            </th>
            <td>{s.form.name}</td>
            {clients && <td>{s.project?.name ?? ''}</td>}
            <td class="nowrap">{formatTime(s.deleted_at)}</td>
            <td class="nowrap">{formatTime(s.purge_at)}</td>
            <td class="row-actions">
              {may('restoreSubmissions') && (
                <button type="button" class="link" disabled={props.pending} onClick={() => void props.onRestore(s)}>
                  Restore <span class="sr-only">{summary}</span>
                </button>
              )}
              {may('deleteSubmission') && (
                <button
                  type="button"
                  class="link danger-text"
                  disabled={props.pending}
                  onClick={() => props.onForGood(s)}
                >
                  Delete now <span class="sr-only">{summary}</span>
                </button>
              )}
            </td>
          </tr>
        );
      })}
    </Table>
  );
}

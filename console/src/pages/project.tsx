import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ok } from '../api';
import type { ProjectDashboard } from '../api-types';
import {
  Confirm,
  ErrorBox,
  formatTime,
  SaveRow,
  StatusBadge,
  Table,
  TextField,
  useAction,
  useResource,
} from '../components/ui';
import { fieldErrors } from '../components/field-errors';
import { confirmAfterNavigation } from '../flash';
import { may } from '../people';
import { useTitle } from '../title';
import { Board, spamShare, useWindow } from './dashboard';
import { FormDefaultsSettings } from './form/form-defaults';
import { useUnsaved } from '../components/unsaved';

/** A project at a glance: its submissions per day and a page of its forms with what needs the owner's attention. */
export function ProjectPage({ id }: { id: string }) {
  const days = useWindow();
  const { query } = useLocation();
  const cursor = query['cursor'];
  const board = useResource(
    () =>
      ok(
        api.GET('/v1/projects/{id}/dashboard', {
          params: { path: { id }, query: { days, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [id, days, cursor],
  );
  const b = board.data;
  useTitle(b ? b.project.name : 'Project');
  const base = `/console/projects/${id}`;
  return (
    <>
      <p class="crumbs">
        <a href="/console/dashboard">Dashboard</a> /
      </p>
      <Board
        title={b?.project.name ?? 'Project'}
        base={base}
        days={days}
        board={board}
        what="the project"
        figures={(b) => [
          ['Forms', b.project.form_count.toLocaleString()],
          ['Received', b.totals.received.toLocaleString()],
          ['Spam share', spamShare(b.totals.received, b.totals.spam)],
          ['Spam this week', b.totals.spam_week.toLocaleString()],
          ['Failing webhooks', b.totals.failing_webhooks.toLocaleString()],
        ]}
      >
        {(b) => (
          <>
            <ProjectForms board={b} days={days} />
            {b.next_cursor && (
              <p>
                <a
                  href={`${base}?${new URLSearchParams({ ...(days === 30 ? {} : { days: '90' }), cursor: b.next_cursor })}`}
                >
                  More forms
                </a>
              </p>
            )}
            {may('updateProject') && <ProjectDefaults id={id} />}
            {may('updateProject') && <RenameProject id={id} name={b.project.name} onSaved={board.reload} />}
            {may('deleteProject') && !b.project.is_default && <DeleteProject id={id} board={b} />}
          </>
        )}
      </Board>
    </>
  );
}

function ProjectForms({ board, days }: { board: ProjectDashboard; days: number }) {
  return (
    <section aria-labelledby="project-forms-title">
      <div class="page-head">
        <h2 id="project-forms-title">Forms</h2>
        {may('createForm') && (
          <a class="button" href={`/console/forms/new?project=${board.project.id}`}>
            New form
          </a>
        )}
      </div>
      {board.forms.length === 0 ? (
        <p class="muted">No forms in this project yet.</p>
      ) : (
        <Table
          label="Forms of the project"
          reflow
          columns={[
            { label: 'Form' },
            { label: 'Status' },
            { label: 'Unread', num: true },
            { label: 'Last submission' },
            { label: `Received (${days} days)`, num: true },
            { label: 'Spam this week', num: true },
            { label: 'Failing webhooks', num: true },
          ]}
        >
          {board.forms.map((f) => (
            <tr key={f.id}>
              <th scope="row">
                <a href={`/console/forms/${f.id}/submissions`}>{f.name}</a>
              </th>
              <td>
                <StatusBadge status={f.status} />
              </td>
              <td class="num">{f.unread_capped ? `${(f.unread - 1).toLocaleString()}+` : f.unread.toLocaleString()}</td>
              <td>{f.last_submission_at ? formatTime(f.last_submission_at) : 'none yet'}</td>
              <td class="num">{f.received.toLocaleString()}</td>
              <td class="num">{f.spam_week.toLocaleString()}</td>
              <td class={`num${f.failing_webhooks > 0 ? ' failing' : ''}`}>
                {f.failing_webhooks > 0 ? (
                  <a href={`/console/forms/${f.id}/webhooks`}>{f.failing_webhooks}</a>
                ) : (
                  f.failing_webhooks
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

/** The settings the project's forms inherit, once the project is read. */
function ProjectDefaults({ id }: { id: string }) {
  const project = useResource(() => ok(api.GET('/v1/projects/{id}', { params: { path: { id } } })), [id]);
  if (!project.data) return <ErrorBox error={project.error} />;
  return <FormDefaultsSettings project={project.data} onSaved={project.reload} />;
}

function RenameProject({ id, name, onSaved }: { id: string; name: string; onSaved(): Promise<void> }) {
  const [value, setValue] = useState(name);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  useUnsaved('Rename', value.trim() !== name);
  const save = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    const done = await action.run(() =>
      ok(api.PATCH('/v1/projects/{id}', { params: { path: { id } }, body: { name: value.trim() } })),
    );
    if (!done) return;
    setSaved(true);
    await onSaved();
  };
  return (
    <form class="stack" aria-labelledby="rename-title" onSubmit={(e) => void save(e)}>
      <h2 id="rename-title">Rename</h2>
      <TextField
        id="p-rename"
        label="Name"
        required
        maxLength={100}
        value={value}
        onValue={setValue}
        error={fieldErrors(action.error)['name']}
      />
      <SaveRow action={action} saved={saved} atFields={['name']}>
        Rename project
      </SaveRow>
    </form>
  );
}

function DeleteProject({ id, board }: { id: string; board: ProjectDashboard }) {
  const { route } = useLocation();
  const [open, setOpen] = useState(false);
  const action = useAction();
  const remove = async () => {
    setOpen(false);
    const done = await action.run(async () => {
      await ok(api.DELETE('/v1/projects/{id}', { params: { path: { id } } }));
      return true;
    });
    if (!done) return;
    confirmAfterNavigation(`Project “${board.project.name}” deleted.`, '/console/dashboard');
    route('/console/dashboard');
  };
  return (
    <section class="danger-zone" aria-labelledby="delete-project-title">
      <h2 id="delete-project-title">Delete this project</h2>
      <p>
        Only an empty project can be deleted: move its forms to another project (in each form’s settings) or delete them
        for good first. People and keys limited to it keep their other projects.
      </p>
      <ErrorBox error={action.error} />
      <button type="button" class="danger" onClick={() => setOpen(true)}>
        Delete project
      </button>
      <Confirm
        open={open}
        title={`Delete the project “${board.project.name}”?`}
        confirmLabel="Delete project"
        onConfirm={() => void remove()}
        onCancel={() => setOpen(false)}
      >
        <p>This cannot be undone.</p>
      </Confirm>
    </section>
  );
}

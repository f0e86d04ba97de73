import { useLocation } from 'preact-iso';
import { api, ok } from '../api';
import type { Form, Project } from '../api-types';
import { ProjectSelect, formTitle, projectName, useProjects } from '../components/projects';
import { ErrorBox, Loading, StatusBadge, Table, useAction, useResource } from '../components/ui';
import { Snippets } from '../components/snippets';
import { useTitle } from '../title';
import { may } from '../people';
import { SearchAllForms } from './search';

type Listed = Form & { month: number };

/**
 * The account's forms (of one project, when `project` names one), each with this month's received count (left at 0
 * when usage cannot be read).
 */
async function loadForms(project: string): Promise<Listed[]> {
  const [list, usage] = await Promise.all([
    ok(api.GET('/v1/forms', { params: { query: { limit: 100, ...(project ? { project_id: project } : {}) } } })),
    ok(api.GET('/v1/usage')).catch(() => undefined),
  ]);
  const counts = new Map((usage?.forms ?? []).map((f) => [f.form_id, f.received]));
  return list.data.map((f) => ({ ...f, month: counts.get(f.id) ?? 0 }));
}

export function FormsPage() {
  useTitle('Forms');
  const { query, route } = useLocation();
  const project = query['project'] ?? '';
  const projects = useProjects();
  const forms = useResource(() => loadForms(project), [project]);
  const toggle = useAction();
  const setStatus = async (form: Form, status: Form['status']) => {
    await toggle.run(() => ok(api.PATCH('/v1/forms/{id}', { params: { path: { id: form.id } }, body: { status } })));
    await forms.reload();
  };
  return (
    <>
      <div class="page-head">
        <h1>Forms</h1>
        <span class="steps">
          {may('createForm') && (
            <a href={`/console/forms/new${project ? `?project=${project}` : ''}`} class="button">
              New form
            </a>
          )}
          <a href="/console/forms/trash" class="button secondary">
            Trash
          </a>
        </span>
      </div>
      <ProjectSelect
        id="forms-project"
        label="Show"
        all="All projects"
        projects={projects.data}
        value={project}
        onValue={(p) => route(p ? `/console/forms?project=${p}` : '/console/forms')}
      />
      <SearchAllForms project={project || undefined} />
      <ErrorBox error={forms.error ?? toggle.error} />
      {forms.loading && !forms.data && <Loading what="forms" />}
      {forms.data && forms.data.length === 0 && <NoForms />}
      {forms.data && forms.data.length > 0 && (
        <FormsTable
          forms={forms.data}
          projects={!project && (projects.data?.length ?? 0) > 1 ? projects.data : undefined}
          pending={toggle.pending}
          onStatus={setStatus}
        />
      )}
    </>
  );
}

function NoForms() {
  return (
    <div class="empty">
      <h2>No forms yet</h2>
      <p>
        Create a form, then point your website at its ingest URL. With a form named “Contact” your page would post like
        this:
      </p>
      <Snippets form={{ ingest_url: `${window.location.origin}/v1/f/contact`, honeypot_field: '_gotcha' }} />
    </div>
  );
}

type RowProps = {
  pending: boolean;
  onStatus(form: Form, status: Form['status']): void;
  /** Set when the table shows several projects' forms: each row names its project. */
  projects?: Project[];
};

function FormsTable({ forms, ...row }: RowProps & { forms: Listed[] }) {
  return (
    <Table
      label="Forms"
      reflow
      columns={[
        { label: 'Name' },
        ...(row.projects ? [{ label: 'Project' }] : []),
        { label: 'Status' },
        { label: 'This month', num: true },
        { label: 'Ingest URL' },
        { label: 'Actions' },
      ]}
    >
      {forms.map((f) => (
        <FormRow key={f.id} form={f} {...row} />
      ))}
    </Table>
  );
}

function FormRow({ form: f, pending, onStatus, projects }: RowProps & { form: Listed }) {
  return (
    <tr>
      <th scope="row">
        <a href={`/console/forms/${f.id}/submissions`}>{f.name}</a>
      </th>
      {projects && (
        <td>
          <a href={`/console/projects/${f.project_id}`}>{projectName(projects, f.project_id)}</a>
        </td>
      )}
      <td>
        <StatusBadge status={f.status} />
      </td>
      <td class="num">{f.month}</td>
      <td>
        <code class="wrap">{f.ingest_url}</code>
      </td>
      <td class="row-actions">
        <a href={`/console/forms/${f.id}/webhooks`}>Webhooks</a>
        <a href={`/console/forms/${f.id}`}>Settings</a>
        {!may('updateForm') ? null : f.status === 'live' ? (
          <button type="button" class="link" disabled={pending} onClick={() => onStatus(f, 'paused')}>
            Pause <span class="sr-only">{formTitle(f)}</span>
          </button>
        ) : (
          <button type="button" class="link" disabled={pending} onClick={() => onStatus(f, 'live')}>
            Resume <span class="sr-only">{formTitle(f)}</span>
          </button>
        )}
      </td>
    </tr>
  );
}

import { useState } from 'preact/hooks';
import { api, ok } from '../api';
import type { ResponseBody } from '../api-types';
import { Confirm, ErrorBox, StatusBadge, Table, TextField, formatTime, useAction } from '../components/ui';
import { timeZone } from '../time';
import { ProjectSelect, useProjects } from '../components/projects';

type Found = ResponseBody<'findDataSubjectSubmissions'>['data'];

/**
 * Requests from a person whose data a form collected: find every submission with their address, download them as
 * NDJSON (what the owner sends them), or erase them (files first, as retention deletes).
 */
export function PrivacyPage() {
  const [email, setEmail] = useState('');
  const [project, setProject] = useState('');
  const projects = useProjects();
  const [found, setFound] = useState<{ email: string; project: string; rows: Found } | undefined>(undefined);
  const [erased, setErased] = useState<{ email: string; deleted: number } | undefined>(undefined);
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  const query = { query: { email, ...(project ? { project_id: project } : {}) } };

  const find = (e: Event) => {
    e.preventDefault();
    setErased(undefined);
    void action.run(async () => {
      const { data } = await ok(api.GET('/v1/data-subjects/submissions', { params: query }));
      setFound({ email, project, rows: data });
    });
  };
  const erase = () =>
    action.run(async () => {
      const { deleted } = await ok(api.DELETE('/v1/data-subjects', { params: { query: queryOf(found) } }));
      setConfirming(false);
      setFound(undefined);
      setErased({ email: found?.email ?? '', deleted });
    });

  return (
    <>
      <h1>Privacy</h1>
      <p class="muted">
        Answer a person who asks what your forms collected about them, or asks you to erase it: every submission you can
        see (this account’s, or your projects’) in which a field is their e-mail address (ignoring case and surrounding
        spaces). Choose a project to answer for that client alone.
      </p>
      <form onSubmit={find} class="inline">
        <TextField
          id="p-email"
          label="E-mail address"
          type="email"
          required
          maxLength={320}
          value={email}
          onValue={setEmail}
        />
        <ProjectSelect
          id="p-project"
          label="Project"
          projects={projects.data}
          value={project}
          onValue={setProject}
          all="Every project you can see"
        />
        <button type="submit" disabled={action.pending}>
          Find submissions
        </button>
      </form>
      <ErrorBox error={action.error} />
      {erased && (
        <p role="status">
          Erased {erased.deleted} submission{erased.deleted === 1 ? '' : 's'} of {erased.email}.
        </p>
      )}
      {found && <Results found={found} onErase={() => setConfirming(true)} />}
      <Confirm
        open={confirming && Boolean(found)}
        title={`Erase every submission of ${found?.email ?? ''}?`}
        confirmLabel="Erase"
        onConfirm={() => void erase()}
        onCancel={() => setConfirming(false)}
      >
        Their payloads, files, delivery records and e-mail records are deleted now and cannot be restored.
      </Confirm>
    </>
  );
}

/** The query of what was found: the address, and the client it was asked for (an erasure erases what was shown). */
const queryOf = (found: { email: string; project: string } | undefined) => ({
  email: found?.email ?? '',
  ...(found?.project ? { project_id: found.project } : {}),
});

/**
 * What was found, each with its form and (a column of its own when any is a client's) the form's client; the Excel and
 * NDJSON downloads and the erase button.
 */
function Results({ found, onErase }: { found: { email: string; project: string; rows: Found }; onErase(): void }) {
  const n = found.rows.length;
  const clients = found.rows.some((s) => s.project);
  const asked = new URLSearchParams(queryOf(found)).toString();
  const href = `/v1/data-subjects/export?${asked}`;
  const workbook = `/v1/data-subjects/export.xlsx?${asked}&tz=${encodeURIComponent(timeZone.value)}`;
  return (
    <section aria-labelledby="found-title">
      <h2 id="found-title">
        {n} submission{n === 1 ? '' : 's'} with {found.email}
      </h2>
      {n > 0 && (
        <>
          <p>
            <a href={workbook} download="data-subject.xlsx" class="button">
              Download for Excel
            </a>{' '}
            <a href={href} download="data-subject.ndjson" class="button">
              Download as NDJSON
            </a>{' '}
            <button type="button" class="danger" onClick={onErase}>
              Erase them…
            </button>
          </p>
          <Table
            label="Submissions found"
            reflow
            columns={['Received', 'Form', ...(clients ? ['Project'] : []), 'Status', 'Submission']}
          >
            {found.rows.map((s) => (
              <tr key={s.id}>
                <td>{formatTime(s.received_at)}</td>
                <td>{s.form_name ?? '(deleted form)'}</td>
                {clients && <td>{s.project?.name ?? ''}</td>}
                <td>
                  <StatusBadge status={s.status} />
                </td>
                <td>
                  <a href={`/console/submissions/${s.id}`}>{s.id}</a>
                </td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </section>
  );
}

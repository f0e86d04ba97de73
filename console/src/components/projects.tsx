import { api, ok } from '../api';
import type { Project } from '../api-types';
import { useState } from 'preact/hooks';
import { Check, SelectField, TextField, useResource } from './ui';

/** The projects the person sees (all of the account's, or those they are limited to), the default first. */
export function useProjects() {
  return useResource(async () => (await ok(api.GET('/v1/projects'))).data, []);
}

/** A form's project as the API names it beside the form: null in the account's default project (no client). */
export type FormProject = { id: string; name: string } | null;

/** A form named with its client, as titles word it: `Contact · Acme Dental` (the form alone in no client's project). */
export const formTitle = (form: { name: string; project: FormProject }) =>
  form.project ? `${form.name} · ${form.project.name}` : form.name;

/** The client as a step of a breadcrumb (its project's page), before the form's; nothing for a form of no client. */
export function ClientCrumb({ project }: { project: FormProject }) {
  if (!project) return null;
  return (
    <>
      {' '}
      <a href={`/console/projects/${encodeURIComponent(project.id)}`}>{project.name}</a> /
    </>
  );
}

/** A project's name as a person reads it. */
export const projectName = (projects: Project[] | undefined, id: string) =>
  projects?.find((p) => p.id === id)?.name ?? 'a project';

/** Chooses a project (shown only when there is more than one to choose from). */
export function ProjectSelect(props: {
  id: string;
  label?: string;
  help?: string;
  projects: Project[] | undefined;
  value: string;
  onValue(value: string): void;
  error?: string;
  all?: string;
}) {
  const projects = props.projects ?? [];
  if (projects.length < 2) return null;
  const options: [string, string][] = [
    ...(props.all ? [['', props.all] as [string, string]] : []),
    ...projects.map((p): [string, string] => [p.id, p.name]),
  ];
  return (
    <SelectField
      id={props.id}
      label={props.label ?? 'Project'}
      help={props.help}
      options={options}
      value={props.value}
      onValue={props.onValue}
      error={props.error}
    />
  );
}

/** Where a member or key may look: `undefined` until chosen, `null` for the whole account, or these projects. */
export type Reach = string[] | null | undefined;

/**
 * What a viewer or editor may see, chosen explicitly (admins and owners have the whole account): the whole account,
 * or the projects ticked, one per line, with a filter once there are many. Nothing is chosen at first, so forgetting
 * the choice cannot hand a client’s staff every other client (`useReach` says what is missing).
 */
export function ProjectLimit(props: { id: string; projects: Project[] | undefined; reach: ReachChoice; what: string }) {
  const [filter, setFilter] = useState('');
  const projects = props.projects ?? [];
  if (projects.length === 0) return null;
  const { value, error, choose } = props.reach;
  const ticked = value ?? [];
  const wanted = filter.trim().toLowerCase();
  const shown = projects.filter((p) => p.name.toLowerCase().includes(wanted));
  const toggle = (id: string, on: boolean) => choose(on ? [...ticked, id] : ticked.filter((p) => p !== id));
  return (
    <fieldset class="project-limit" aria-describedby={error ? `${props.id}-error` : undefined}>
      <legend>What may {props.what} see?</legend>
      <label class="check">
        <input type="radio" name={props.id} checked={value === null} onChange={() => choose(null)} /> The whole account:
        every project, and those made later
      </label>
      <label class="check">
        <input type="radio" name={props.id} checked={Array.isArray(value)} onChange={() => choose(ticked)} /> Only the
        projects ticked below
      </label>
      {Array.isArray(value) && (
        <div class="project-choices">
          {projects.length > 8 && (
            <TextField id={`${props.id}-filter`} label="Filter projects" value={filter} onValue={setFilter} />
          )}
          <ul class="plain">
            {shown.map((p) => (
              <li key={p.id}>
                <Check checked={ticked.includes(p.id)} onValue={(on) => toggle(p.id, on)}>
                  {p.name}
                </Check>
              </li>
            ))}
          </ul>
        </div>
      )}
      {error && (
        <p id={`${props.id}-error`} class="field-error" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}

/** What is missing from a reach before it can be sent: the choice itself, or a project when limited. */
const reachProblem = (reach: Reach): string | undefined =>
  reach === undefined
    ? 'Choose the whole account or the projects'
    : reach !== null && reach.length === 0
      ? 'Tick at least one project, or choose the whole account'
      : undefined;

/** The reach a form asks for: its value, what is missing once sent without it, and the form's checks. */
export function useReach() {
  const [value, setValue] = useState<Reach>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  return {
    value,
    error,
    choose(next: Reach) {
      setValue(next);
      setError(undefined);
    },
    /**
     * The `project_ids` to send (null: the whole account, as when there is no choice to make), or undefined, the
     * missing part then shown, when the choice is due and not made.
     */
    projectIds(choosing: boolean): string[] | null | undefined {
      const problem = choosing ? reachProblem(value) : undefined;
      setError(problem);
      return problem ? undefined : choosing ? (value ?? null) : null;
    },
    reset: () => setValue(undefined),
  };
}
type ReachChoice = ReturnType<typeof useReach>;

/** Where a member or key may look, in words: “All projects”, or the names of its projects. */
export const limitWords = (projects: Project[] | undefined, ids: string[] | null) =>
  ids === null
    ? 'All projects'
    : ids.length === 0
      ? 'None (its projects were deleted)'
      : ids.map((id) => projectName(projects, id)).join(', ');

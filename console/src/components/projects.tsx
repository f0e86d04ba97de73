import { api, ok } from '../api';
import type { Project } from '../api-types';
import { Check, SelectField, useResource } from './ui';

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

/**
 * The projects a viewer or editor is limited to, as checkboxes: none checked is the whole account (admins and owners
 * always have it, so the choice is not offered for them).
 */
export function ProjectLimit(props: {
  projects: Project[] | undefined;
  value: string[];
  onValue(value: string[]): void;
  what: string;
}) {
  const projects = props.projects ?? [];
  if (projects.length === 0) return null;
  const toggle = (id: string, on: boolean) =>
    props.onValue(on ? [...props.value, id] : props.value.filter((p) => p !== id));
  return (
    <fieldset class="project-limit">
      <legend>Limit {props.what} to projects</legend>
      <p class="muted small">None checked: the whole account.</p>
      {projects.map((p) => (
        <Check key={p.id} checked={props.value.includes(p.id)} onValue={(on) => toggle(p.id, on)}>
          {p.name}
        </Check>
      ))}
    </fieldset>
  );
}

/** Where a member or key may look, in words: “All projects”, or the names of its projects. */
export const limitWords = (projects: Project[] | undefined, ids: string[] | null) =>
  ids === null
    ? 'All projects'
    : ids.length === 0
      ? 'None (its projects were deleted)'
      : ids.map((id) => projectName(projects, id)).join(', ');

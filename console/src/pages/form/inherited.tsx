import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, ok } from '../../api';
import type { Form, Project, RequestBody } from '../../api-types';
import { useResource } from '../../components/ui';

/** A setting a form may take from its project. */
export type Inheritable = NonNullable<RequestBody<'updateForm'>['inherit']>[number];
/** What a project sets for its forms. */
export type FormDefaults = Project['form_defaults'];
/** The form's project as its settings name it: its name and the settings it sets. */
export type ProjectDefaults = { name: string; defaults: FormDefaults };

/** The settings the form's project sets for its forms, and its name (undefined until read). */
export function useProjectDefaults(form: Form): ProjectDefaults | undefined {
  const project = useResource(
    () => ok(api.GET('/v1/projects/{id}', { params: { path: { id: form.project_id } } })),
    [form.project_id, form.updated_at],
  );
  return project.data && { name: project.data.name, defaults: project.data.form_defaults };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Which of a section's settings the form takes from its project, as its fields now read: one the form inherits (or
 * that “Use the project’s” put back) while its fields still hold the project's value. `request` makes the body to
 * send: such a setting is left out (it stays the project's), or named in `inherit` to become the project's again;
 * every other setting is sent, and becomes the form's own.
 */
export function useInheritance<Values, Body extends object>(props: {
  /** Undefined for a form not made yet: it inherits nothing here (the API fills in what it is not given). */
  form: Form | undefined;
  project: ProjectDefaults | undefined;
  /** The section's settings, each with the fields that show it. */
  settings: Partial<Record<Inheritable, (keyof Values)[]>>;
  valuesOf(form: Form): Values;
  bodyOf(values: Values): Body;
  values: Values;
  setValues(update: (values: Values) => Values): void;
}) {
  const { form, project, valuesOf, bodyOf } = props;
  const inherited = form?.inherited ?? [];
  const [following, setFollowing] = useState(() => new Set<Inheritable>(inherited));
  const settings = form ? (Object.keys(props.settings) as Inheritable[]) : [];
  // Until the project is read, what the form inherits is its own value, which is the project's.
  const sets = (s: Inheritable) => form !== undefined && (project ? s in project.defaults : inherited.includes(s));
  const withProject = (s: Inheritable) =>
    form ? valuesOf({ ...form, [s]: project ? project.defaults[s] : form[s] }) : props.values;
  const body = bodyOf(props.values) as Record<string, unknown>;
  const inherits = (s: Inheritable) =>
    following.has(s) && sets(s) && same(body[s], (bodyOf(withProject(s)) as Record<string, unknown>)[s]);
  return {
    project,
    sets,
    inherits,
    /** Puts the project's value into the setting's fields, to be taken from the project when saved. */
    take(s: Inheritable) {
      const theirs = withProject(s);
      const fields = props.settings[s] ?? [];
      props.setValues((v) => ({ ...v, ...Object.fromEntries(fields.map((f) => [f, theirs[f]])) }));
      setFollowing((f) => new Set([...f, s]));
    },
    /** Whether saving would change which settings the form takes from its project. */
    changed: settings.some((s) => inherits(s) !== inherited.includes(s)),
    request(values: Values): Body & { inherit?: Inheritable[] } {
      const out = { ...bodyOf(values) } as Record<string, unknown>;
      const inherit = settings.filter((s) => inherits(s));
      for (const s of inherit) delete out[s];
      const back = inherit.filter((s) => !inherited.includes(s));
      return (back.length ? { ...out, inherit: back } : out) as Body & { inherit?: Inheritable[] };
    },
    /** After a save: follow what the saved form inherits. */
    reset(saved: Form) {
      setFollowing(new Set(saved.inherited));
    },
  };
}
export type Inheritance = ReturnType<typeof useInheritance>;

/**
 * What a setting the form's project sets says of it, to put in its field's help: “From <project>” while the form takes
 * it from there (editing it makes it the form's own), else “Set for this form” with a button that puts the project's
 * value back. Null for a setting the project does not set.
 */
export function inheritNote(of: Inheritance | undefined, setting: Inheritable, what: string): JSX.Element | null {
  if (!of?.project || !of.sets(setting)) return null;
  const name = of.project.name;
  if (of.inherits(setting))
    return (
      <span>
        <strong>From {name}</strong>; change it to set this form’s own.
      </span>
    );
  return (
    <span>
      <strong>Set for this form.</strong>{' '}
      <button type="button" class="link" aria-label={`Use ${name}’s ${what}`} onClick={() => of.take(setting)}>
        Use {name}’s
      </button>
    </span>
  );
}

/** A field's help with what the form's project says of its setting after it. */
export const withNote = (help: string, note: JSX.Element | null) =>
  note ? (
    <>
      {help} {note}
    </>
  ) : (
    help
  );

/** `inheritNote` on a line of its own, under the fields of a setting that several fields show. */
export function InheritLine(props: { of: Inheritance | undefined; setting: Inheritable; what: string }) {
  const note = inheritNote(props.of, props.setting, props.what);
  return note && <p class="muted small">{note}</p>;
}

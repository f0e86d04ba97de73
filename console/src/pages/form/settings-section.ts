import { useState } from 'preact/hooks';
import { api, ok } from '../../api';
import type { Form, RequestBody } from '../../api-types';
import { useAction } from '../../components/ui';
import { useUnsaved } from '../../components/unsaved';
import { useInheritance, type Inheritable, type ProjectDefaults } from './inherited';

type FormChanges = RequestBody<'updateForm'>;

/** A control's value and setter, by the value's name: a field's binding. */
export type Bind<Values> = <K extends keyof Values>(name: K) => { value: Values[K]; onValue(value: Values[K]): void };

/** A setter of one value (a method's type, so the binding of more values serves fields that set fewer of them). */
type Setter<T> = { set(value: T): void }['set'];

/** A section's controls: its values, a setter per value, and a text field's binding (value and setter) per value. */
export type Binding<Values> = {
  values: Values;
  set<K extends keyof Values>(name: K): Setter<Values[K]>;
  bind: Bind<Values>;
};

/** Whether two sets of values differ (what a section holds against what was saved). */
export const differ = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);

/**
 * A set of fields' values with a setter per value and a binding per field, and whether what they hold was just saved
 * (`saved`, reset by any edit).
 */
export function useValues<Values>(initial: () => Values) {
  const [values, setValues] = useState(initial);
  const [saved, setSaved] = useState(false);
  const edit = (update: (values: Values) => Values) => {
    setSaved(false);
    setValues(update);
  };
  const set =
    <K extends keyof Values>(name: K) =>
    (value: Values[K]) =>
      edit((v) => ({ ...v, [name]: value }));
  const bind: Bind<Values> = (name) => ({ value: values[name], onValue: set(name) });
  return { values, setValues, edit, set, bind, saved, setSaved };
}

/**
 * A part of a form's settings saved on its own: its field values (read from the form), a setter per field, and a
 * submit that PATCHes `bodyOf(values)` and reads the saved form back into the fields. Of the `settings` the form's
 * project sets, those whose fields still hold the project's value stay the project's (`inheritance`); the section
 * says while it holds edits not saved (`dirty`), and the page asks before they are lost.
 */
export function useSettingsSection<Values, Body extends FormChanges>(props: {
  name: string;
  form: Form;
  project?: ProjectDefaults | undefined;
  settings?: Partial<Record<Inheritable, (keyof Values)[]>>;
  valuesOf(form: Form): Values;
  bodyOf(values: Values): Body;
  onSaved?(): Promise<void>;
}) {
  const { form, valuesOf, bodyOf, onSaved } = props;
  const { values, setValues, edit, set, bind, saved, setSaved } = useValues(() => valuesOf(form));
  const action = useAction();
  const inheritance = useInheritance({
    form,
    project: props.project,
    settings: props.settings ?? {},
    valuesOf,
    bodyOf,
    values,
    setValues: edit,
  });
  const dirty = differ(values, valuesOf(form)) || inheritance.changed;
  useUnsaved(props.name, dirty);
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = inheritance.request(values);
    const result = await action.run(() => ok(api.PATCH('/v1/forms/{id}', { params: { path: { id: form.id } }, body })));
    if (!result) return;
    setValues(valuesOf(result));
    inheritance.reset(result);
    setSaved(true);
    await onSaved?.();
  };
  return { values, set, bind, saved, dirty, action, submit, inheritance };
}

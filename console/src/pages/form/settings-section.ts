import { useState } from 'preact/hooks';
import { api, ok } from '../../api';
import type { Form, RequestBody } from '../../api-types';
import { useAction } from '../../components/ui';

type FormChanges = RequestBody<'updateForm'>;

/** A section's controls: its values, a setter per value, and a text field's binding (value and setter) per value. */
export type Binding<Values> = {
  values: Values;
  set<K extends keyof Values>(name: K): (value: Values[K]) => void;
  bind<K extends keyof Values>(name: K): { value: Values[K]; onValue(value: Values[K]): void };
};

/**
 * A part of a form's settings saved on its own: its field values (read from the form), a setter per field, and a
 * submit that PATCHes `bodyOf(values)` and reads the saved form back into the fields.
 */
export function useSettingsSection<Values>(props: {
  form: Form;
  valuesOf(form: Form): Values;
  bodyOf(values: Values): FormChanges;
  onSaved?(): Promise<void>;
}) {
  const { form, valuesOf, bodyOf, onSaved } = props;
  const [values, setValues] = useState(() => valuesOf(form));
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const set =
    <K extends keyof Values>(name: K) =>
    (value: Values[K]) => {
      setSaved(false);
      setValues((v) => ({ ...v, [name]: value }));
    };
  /** A control's value and setter, by the value's name: a field's binding. */
  const bind = <K extends keyof Values>(name: K) => ({ value: values[name], onValue: set(name) });
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = bodyOf(values);
    const result = await action.run(() => ok(api.PATCH('/v1/forms/{id}', { params: { path: { id: form.id } }, body })));
    if (!result) return;
    setValues(valuesOf(result));
    setSaved(true);
    await onSaved?.();
  };
  return { values, set, bind, saved, action, submit };
}

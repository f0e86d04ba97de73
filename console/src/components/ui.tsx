import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';
import { formatTime } from '../time';
import { otherErrors } from './field-errors';

export { formatTime };

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

/**
 * A problem document shown once: its title, and its detail or (for a refused field) the field errors in plain words.
 * Errors of the fields named in `atFields` are shown at those fields instead, so here only a pointer to them.
 */
export function ErrorBox({ error, atFields = [] }: { error: unknown; atFields?: string[] }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : new ApiError(0, 'Something went wrong', String(error));
  const others = otherErrors(e, atFields);
  const atField = e.errors.length > others.length;
  return (
    <div class="error" role="alert">
      <strong>
        {atField ? 'Check the marked fields.' : e.errors.length > 0 ? 'Some values were not accepted.' : e.title}
      </strong>
      {e.errors.length === 0 && e.detail && <p>{e.detail}</p>}
      {others.length > 0 && (
        <ul>
          {others.map((text) => (
            <li key={text}>{text}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** What `useResource` gives a view. */
export type Resource<T> = { data?: T; error?: unknown; loading: boolean; reload(): Promise<void> };

/** Loads data for a view: `{ data, error, loading, reload }`. */
export function useResource<T>(load: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const n = ++seq.current;
    setState((s) => ({ ...s, loading: true, error: undefined }));
    try {
      const data = await load();
      if (n === seq.current) setState({ data, loading: false });
    } catch (error) {
      if (n === seq.current) setState({ error, loading: false });
    }
  }, deps);
  useEffect(() => {
    // New inputs (another page, other filters): never show the previous inputs' data meanwhile.
    setState({ loading: true });
    void reload();
  }, [reload]);
  return { ...state, reload };
}

/** What `useAction` gives a view. */
export type Action = ReturnType<typeof useAction>;

/** Runs an action, exposing its pending state and error. */
export function useAction() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = useCallback(async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setPending(true);
    setError(undefined);
    try {
      return await action();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setPending(false);
    }
  }, []);
  return { pending, error, run, setError };
}

/** Copies text; says so, or asks the owner to copy by hand when the clipboard is not available. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <span class="copy">
      <button type="button" class="secondary" onClick={copy}>
        {label}
      </button>
      <span role="status" class="muted small">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select the text and copy it' : ''}
      </span>
    </span>
  );
}

/** A value shown once (a new key or secret), with a copy button. */
export function ShownOnce({ label, value, children }: { label: string; value: string; children?: ComponentChildren }) {
  return (
    <div class="notice" role="status">
      <p>
        <strong>{label}</strong> {children ?? 'It is shown only this once: copy it now.'}
      </p>
      <div class="secret-row">
        <code class="secret" aria-label={label}>
          {value}
        </code>
        <CopyButton text={value} />
      </div>
    </div>
  );
}

/** A native <dialog> shown as a modal while `open` (focus is trapped in it, Escape closes it): its ref. */
export function useModal(open: boolean) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return ref;
}

/** A modal confirmation (native <dialog>: focus is trapped and Escape cancels). */
export function Confirm(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm(): void;
  onCancel(): void;
}) {
  const ref = useModal(props.open);
  // Its own id: a page may hold several confirmations, each named by its own title.
  const titleId = `confirm-${useId()}`;
  return (
    <dialog ref={ref} aria-labelledby={titleId} onCancel={props.onCancel} onClose={props.onCancel}>
      <h2 id={titleId}>{props.title}</h2>
      <div>{props.children}</div>
      <div class="actions">
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/**
 * An action on one item that waits for the owner's confirmation: `ask(item)` opens the question, `confirm()` closes
 * it and runs the action on the item, `cancel()` closes it.
 */
export function useConfirmed<T>(act: (item: T) => Promise<void>) {
  const [asking, setAsking] = useState<T | null>(null);
  const confirm = async () => {
    const item = asking;
    setAsking(null);
    if (item !== null) await act(item);
  };
  return { asking, ask: setAsking, confirm, cancel: () => setAsking(null) };
}

/** Figures side by side, each a term and its value. */
export function Figures({ figures }: { figures: [string, string][] }) {
  return (
    <dl class="figures">
      {figures.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A scrollable table region that keyboard users can scroll too. */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(1)} GB`;
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

/**
 * A scrollable table with a header row (see `TableHead`); the children are its body rows. With `reflow`, on a narrow
 * screen each row becomes a card, each cell on its own line under its column's name (styles.css), instead of a table
 * to scroll sideways whose controls are out of sight.
 */
export function Table(props: {
  label: string;
  class?: string;
  columns: ColumnSpec[];
  reflow?: boolean;
  children: ComponentChildren;
}) {
  const classes = [props.class, props.reflow ? 'reflow' : undefined].filter(Boolean).join(' ') || undefined;
  return (
    <TableWrap label={props.label}>
      <table class={classes} style={props.reflow ? columnNames(props.columns) : undefined}>
        <TableHead columns={props.columns} />
        <tbody>{props.children}</tbody>
      </table>
    </TableWrap>
  );
}

type Column = { label: string; num?: boolean; hidden?: boolean };

/** The names a reflowed table's cells show before them (`--c1`, `--c2`, … as CSS strings; none for a hidden one). */
function columnNames(columns: ColumnSpec[]): Record<string, string> {
  const names: Record<string, string> = {};
  columns.forEach((c, i) => {
    const column = typeof c === 'string' ? { label: c } : c;
    if (!column.hidden) names[`--c${i + 1}`] = JSON.stringify(column.label);
  });
  return names;
}
/** A column: a plain label, or a label with how it is shown. */
type ColumnSpec = string | Column;

/** The last column of a table whose rows end in buttons: named for screen readers, blank on screen. */
export const ACTIONS_COLUMN: Column = { label: 'Actions', hidden: true };

/** A table's header row; `num` columns are right-aligned, `hidden` labels are for screen readers only. */
export function TableHead({ columns }: { columns: ColumnSpec[] }) {
  return (
    <thead>
      <tr>
        {columns
          .map((c) => (typeof c === 'string' ? { label: c } : c))
          .map((c) => (
            <th key={c.label} scope="col" class={c.num ? 'num' : undefined}>
              {c.hidden ? <span class="sr-only">{c.label}</span> : c.label}
            </th>
          ))}
      </tr>
    </thead>
  );
}

/** What describes a control: its help and its error, by the ids `Field` gives them. */
export const describedBy = (id: string, help: boolean, error: boolean) =>
  [help ? `${id}-help` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;

/**
 * A labelled form field; `help` is shown under the control, and `error` (in plain words) under that; the control's
 * `aria-describedby` should be `describedBy(id, ...)`.
 */
export function Field(props: {
  id: string;
  label: string;
  help?: ComponentChildren;
  error?: string;
  grow?: boolean;
  children: ComponentChildren;
}) {
  return (
    <div class={props.grow ? 'field grow' : 'field'}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.help && (
        <p id={`${props.id}-help`} class="help">
          {props.help}
        </p>
      )}
      {props.error && (
        <p id={`${props.id}-error`} class="field-error">
          {props.label}: {props.error}
        </p>
      )}
    </div>
  );
}

type TextProps = { id: string; value: string; onValue: (value: string) => void };
type InputProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'value'>;
type TextareaProps = Omit<JSX.TextareaHTMLAttributes<HTMLTextAreaElement>, 'value'>;
type TextControl = InputProps | (TextareaProps & { rows: number });

/** An input (or, with `rows`, a textarea) bound to a string, described by its field's help and error. */
function TextInput(props: TextProps & TextControl & { help: boolean; error: boolean }) {
  const { id, value, onValue, help, error, ...rest } = props;
  const common = { id, value, 'aria-describedby': describedBy(id, help, error), 'aria-invalid': error || undefined };
  if ('rows' in rest) return <textarea {...rest} {...common} onInput={(e) => onValue(e.currentTarget.value)} />;
  return <input {...(rest as InputProps)} {...common} onInput={(e) => onValue(e.currentTarget.value)} />;
}

/** A string that a text control edits, to spread into it (`value`, `onValue`). */
export function useText(initial = '') {
  const [value, onValue] = useState(initial);
  return { value, onValue };
}

/** A `Field` around a text input: one id for both, and the input is described by the field's help. */
export function TextField(
  props: TextProps & TextControl & { label: string; help?: ComponentChildren; error?: string; grow?: boolean },
) {
  const { label, help, error, grow, ...input } = props;
  return (
    <Field id={input.id} label={label} help={help} error={error} grow={grow}>
      <TextInput {...(input as TextProps & TextControl)} help={help !== undefined} error={Boolean(error)} />
    </Field>
  );
}

/** The submit button of a form, disabled while its action runs. */
export function SubmitRow({ pending, children }: { pending?: boolean; children: ComponentChildren }) {
  return (
    <div class="actions">
      <button type="submit" disabled={pending}>
        {children}
      </button>
    </div>
  );
}

/** Said above a section's button while it holds edits not saved yet. */
export function UnsavedNote({ dirty }: { dirty: boolean }) {
  return dirty ? <p class="muted small">Changes not saved yet.</p> : null;
}

/**
 * The end of a form that saves settings: the action's error (what `atFields` does not show at a field), “Saved.” once
 * saved, whether edits are not saved yet (`dirty`), and the submit button.
 */
export function SaveRow(props: {
  action: Action;
  saved: boolean;
  dirty?: boolean;
  atFields?: string[];
  children: ComponentChildren;
}) {
  return (
    <>
      <ErrorBox error={props.action.error} atFields={props.atFields} />
      {props.saved && (
        <p class="ok" role="status">
          Saved.
        </p>
      )}
      <UnsavedNote dirty={props.dirty === true} />
      <SubmitRow pending={props.action.pending}>{props.children}</SubmitRow>
    </>
  );
}

/** A `Field` around a select of `options` (each a value and its text), described by the field's help and error. */
export function SelectField<T extends string>(props: {
  id: string;
  label: string;
  value: T;
  options: readonly (readonly [T, string])[];
  onValue(value: NoInfer<T>): void;
  help?: ComponentChildren;
  error?: string;
}) {
  const { id, help, error } = props;
  return (
    <Field id={id} label={props.label} help={help} error={error}>
      <select
        id={id}
        value={props.value}
        aria-describedby={describedBy(id, help !== undefined, Boolean(error))}
        aria-invalid={error ? true : undefined}
        onChange={(e) => props.onValue(e.currentTarget.value as T)}
      >
        {props.options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** Options whose values are their own texts. */
export const plainOptions = <T extends string>(values: readonly T[]) => values.map((v) => [v, v] as const);

type CheckboxProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'checked' | 'type'> & {
  checked: boolean;
  onValue(checked: boolean): void;
};

/** A checkbox with its text after it, in one label. */
export function Check(props: { checked: boolean; onValue(checked: boolean): void; children: ComponentChildren }) {
  const { checked, onValue, children } = props;
  return (
    <label class="check">
      <input type="checkbox" checked={checked} onChange={(e) => onValue(e.currentTarget.checked)} /> {children}
    </label>
  );
}

/** A `Field` around a checkbox (or, with role="switch", a switch), described by the field's help. */
export function CheckboxField(props: CheckboxProps & { id: string; label: string; help?: ComponentChildren }) {
  const { id, label, help, onValue, ...input } = props;
  return (
    <Field id={id} label={label} help={help}>
      <input
        {...input}
        id={id}
        type="checkbox"
        aria-describedby={describedBy(id, help !== undefined, false)}
        onChange={(e) => onValue(e.currentTarget.checked)}
      />
    </Field>
  );
}

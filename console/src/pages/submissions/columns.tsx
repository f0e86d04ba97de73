import { useEffect, useState } from 'preact/hooks';
import type { Submission } from '../../api-types';

const storeKey = (formId: string) => `intake.columns.${formId}`;

function stored(formId: string): string[] | null {
  try {
    const value: unknown = JSON.parse(localStorage.getItem(storeKey(formId)) ?? 'null');
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : null;
  } catch {
    return null;
  }
}

/** Every field name of the rows, in order of first appearance (each row's in posted order). */
export function fieldNames(rows: Submission[]): string[] {
  const names = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r.payload)) names.add(k);
  return [...names];
}

/** Names of a post's message field, as forms name it: the inbox shows it by default. */
const MESSAGE = /^(message|your[-_ ]?message|comments?|body|text|enquiry|inquiry|question|details|notes?)$/i;

/** The first three fields, the message among them: in place of the third when it comes later. */
export function defaultColumns(seen: string[]): string[] {
  const first = seen.slice(0, 3);
  const message = seen.find((name) => MESSAGE.test(name));
  return message && !first.includes(message) ? [...seen.slice(0, 2), message] : first;
}

/**
 * Which fields the inbox shows as columns: the owner's choice for this form (remembered in this browser), else the
 * first three fields of the page with its message field. The choice keeps its own order, the order fields were first seen in.
 */
export function useColumns(formId: string, rows: Submission[] | undefined) {
  const [chosen, setChosen] = useState<string[] | null>(() => stored(formId));
  useEffect(() => setChosen(stored(formId)), [formId]);
  const seen = fieldNames(rows ?? []);
  const known = [...seen, ...(chosen ?? []).filter((c) => !seen.includes(c))];
  const shown = chosen ?? defaultColumns(seen);
  const toggle = (name: string, on: boolean) => {
    const next = known.filter((k) => (k === name ? on : shown.includes(k)));
    setChosen(next);
    try {
      localStorage.setItem(storeKey(formId), JSON.stringify(next));
    } catch {
      // Storage may be off: the choice then lasts while the page is open.
    }
  };
  return { known, shown, toggle };
}
export type Columns = ReturnType<typeof useColumns>;

/** The owner's pick of columns: a checkbox per field name (names are a stranger's text, isolated). */
export function ColumnPicker({ columns }: { columns: Columns }) {
  if (columns.known.length === 0) return null;
  return (
    <details class="columns">
      <summary>Columns</summary>
      <fieldset>
        <legend>Fields shown as columns</legend>
        {columns.known.map((name, i) => (
          <label key={name} class="check">
            <input
              type="checkbox"
              checked={columns.shown.includes(name)}
              onChange={(e) => columns.toggle(name, e.currentTarget.checked)}
              id={`col-${i}`}
            />{' '}
            <bdi>{name}</bdi>
          </label>
        ))}
      </fieldset>
    </details>
  );
}

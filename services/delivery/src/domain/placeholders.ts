// Control characters except tab and newline (kept in the text), and every line break for one-line values.
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;
// eslint-disable-next-line no-control-regex
export const LINE_BREAKS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/**
 * What `{{form}}`, `{{project}}` and `{{received_at}}` stand for: the form's name, its client's (empty for none), and
 * when the submission arrived, in the form's time zone (`readableTime`).
 */
export interface FormNames {
  form: string;
  project?: string;
  received_at?: string;
}

const NAMED = new Set<string>(['form', 'project', 'received_at']);

/**
 * `{{field name}}` replaced by the field's value (empty when the submission has no such field), as plain text (the
 * HTML part escapes the result whole), and in the subject every line break or control character becomes a space, so a
 * value can add no header. Placeholders inside values are not expanded. `{{form}}`, `{{project}}` and `{{received_at}}`
 * are `names`', unless the submission has a field of that name, which a template written before them meant.
 */
export function fillPlaceholders(
  template: string,
  payload: Record<string, string>,
  oneLine: boolean,
  names?: FormNames,
): string {
  const filled = template.replace(/\{\{\s*([^{}]+?)\s*\}\}/g, (_m, name: string) => {
    const value = Object.hasOwn(payload, name)
      ? (payload[name] ?? '')
      : NAMED.has(name)
        ? (names?.[name as keyof FormNames] ?? '')
        : '';
    return oneLine ? value.replace(LINE_BREAKS, ' ') : value.replace(CONTROLS, '');
  });
  return oneLine ? filled.replace(LINE_BREAKS, ' ').trim() : filled;
}

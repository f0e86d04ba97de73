import { problem } from '@intake/shared';
import { CHALLENGE_FIELD, LIMITS, RESERVED_NAMES } from '../rules/limits';

/** Fields as parsed from the body, in order: form bodies may repeat a name; JSON values are already strings. */
export type Fields = [name: string, value: string][];

/** Strict UTF-8: invalid bytes throw instead of becoming U+FFFD (the caller answers 400 bad-body). */
export const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Refuses reserved and overlong names and too many fields with 422 validation-failed. */
export function checkFieldNames(fields: Fields): void {
  if (fields.length > LIMITS.fields)
    throw problem('validation-failed', `A submission may have at most ${LIMITS.fields} fields`, {
      errors: [{ field: 'body', message: `has more than ${LIMITS.fields} fields` }],
    });
  for (const [name] of fields) checkName(name);
}

export function checkName(name: string): void {
  if (name.includes('\u0000'))
    throw problem('validation-failed', 'Field names may not contain NUL characters', {
      errors: [{ field: 'body', message: 'a field name contains NUL' }],
    });
  if (RESERVED_NAMES.has(name))
    throw problem('validation-failed', `The field name "${name}" is reserved`, {
      errors: [{ field: `body/${name}`, message: 'is a reserved name' }],
    });
  if (name.length > LIMITS.fieldNameChars)
    throw problem('validation-failed', `Field names may have at most ${LIMITS.fieldNameChars} characters`, {
      errors: [{ field: `body/${name.slice(0, 40)}…`, message: 'is too long' }],
    });
}

/**
 * The stored payload: field names as sent; a name sent once keeps its string value, a name sent
 * several times is stored as the JSON array of its values (the same string a JSON body with an
 * array value gives). Control fields are taken out and returned apart.
 */
export function buildPayload(
  fields: Fields,
  honeypotField: string,
): { payload: Record<string, string>; challengeToken: string | undefined } {
  const grouped = new Map<string, string[]>();
  for (const [name, value] of fields) {
    const values = grouped.get(name);
    if (values) values.push(value);
    else grouped.set(name, [value]);
  }
  // Control fields: the honeypot is judged on the fields (`honeypotFilled`), the token is the first non-empty one.
  grouped.delete(honeypotField);
  const tokens = grouped.get(CHALLENGE_FIELD);
  grouped.delete(CHALLENGE_FIELD);
  const challengeToken = tokens?.find((v) => v !== '') ?? tokens?.[0];
  const payload: Record<string, string> = {};
  for (const [name, values] of grouped) {
    Object.defineProperty(payload, name, {
      value: values.length === 1 ? values[0] : JSON.stringify(values),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { payload, challengeToken };
}

import { problem } from '@intake/shared';
import { CHALLENGE_FIELD, LIMITS, RESERVED_NAMES } from './limits';

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
): { payload: Record<string, string>; honeypot: string | undefined; challengeToken: string | undefined } {
  const grouped = new Map<string, string[]>();
  for (const [name, value] of fields) {
    const values = grouped.get(name);
    if (values) values.push(value);
    else grouped.set(name, [value]);
  }
  const take = (name: string): string | undefined => {
    const values = grouped.get(name);
    grouped.delete(name);
    return values?.find((v) => v !== '') ?? values?.[0];
  };
  const honeypot = take(honeypotField);
  const challengeToken = take(CHALLENGE_FIELD);
  const payload: Record<string, string> = {};
  for (const [name, values] of grouped) {
    Object.defineProperty(payload, name, {
      value: values.length === 1 ? values[0] : JSON.stringify(values),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { payload, honeypot, challengeToken };
}

/** Why a submission is spam, or undefined: a filled honeypot (the one rule today). */
export function spamReason(honeypot: string | undefined): string | undefined {
  return honeypot !== undefined && honeypot.trim() !== '' ? 'honeypot' : undefined;
}

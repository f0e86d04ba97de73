import { orderedObject, safeName, unstorableText } from '@intake/shared/base';
import { problem, type FieldError } from '@intake/shared/contracts';
import { CHALLENGE_FIELD, LIMITS, PROVIDER_CHALLENGE_FIELDS } from './limits';
import { takeControlFields, type ControlFields } from './control-fields';
import type { IngestForm } from './form.repository';

/** Fields as parsed from the body, in order: form bodies may repeat a name; JSON values are already strings. */
export type Fields = [name: string, value: string][];

/** Strict UTF-8: invalid bytes throw instead of becoming U+FFFD (the caller answers 400 bad-body). */
export const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Refuses too many fields, overlong names, and names or values that are not storable
 * text (NUL, unpaired surrogates: `unstorableText`) with 422 validation-failed naming the field.
 * Bytes that are not UTF-8 never get here: the parsers refuse them with 400 bad-body.
 */
export function checkFields(fields: Fields): void {
  if (fields.length > LIMITS.fields)
    throw problem('validation-failed', `A submission may have at most ${LIMITS.fields} fields`, {
      errors: [{ field: 'body', message: `has more than ${LIMITS.fields} fields` }],
    });
  for (const [name, value] of fields) {
    checkName(name);
    const why = unstorableText(value);
    if (why) refuseUnstorable([{ field: `body/${name}`, message: why }]);
  }
}

/** 422 validation-failed listing the fields whose text cannot be stored (see `unstorableText`). */
export function refuseUnstorable(errors: FieldError[]): void {
  if (errors.length === 0) return;
  throw problem('validation-failed', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
}

export function checkName(name: string): void {
  const why = unstorableText(name);
  if (why) refuseUnstorable([{ field: `body/${safeName(name)}`, message: `has a name that ${why}` }]);
  if (name.length > LIMITS.fieldNameChars)
    throw problem('validation-failed', `Field names may have at most ${LIMITS.fieldNameChars} characters`, {
      errors: [{ field: `body/${name.slice(0, 40)}…`, message: 'is too long' }],
    });
}

/**
 * The stored payload: field names as sent; a name sent once keeps its string value, a name sent
 * several times is stored as the JSON array of its values (the same string a JSON body with an
 * array value gives). Control fields (the honeypot, the bot challenge's token, `_subject`, `_replyto`, `_next`) are
 * taken out and returned apart.
 */
export function buildPayload(
  fields: Fields,
  form: Pick<IngestForm, 'honeypot_field' | 'allowed_origins' | 'redirect_url'>,
): { payload: Record<string, string>; challengeToken: string | undefined; control: ControlFields } {
  const grouped = new Map<string, string[]>();
  for (const [name, value] of fields) {
    const values = grouped.get(name);
    if (values) values.push(value);
    else grouped.set(name, [value]);
  }
  // Control fields: the honeypot is judged on the fields (`honeypotFilled`); the token is the first non-empty value
  // of `bot-challenge-response`, else of a provider widget's own field.
  grouped.delete(form.honeypot_field);
  const control = takeControlFields(grouped, form);
  const tokens: string[] = [];
  for (const name of [CHALLENGE_FIELD, ...PROVIDER_CHALLENGE_FIELDS]) {
    tokens.push(...(grouped.get(name) ?? []));
    grouped.delete(name);
  }
  const challengeToken = tokens.find((v) => v !== '') ?? tokens[0];
  // Names in posted order, numeric ones too (`orderedObject`), and names as data (`__proto__` is a field).
  const payload = orderedObject(
    Array.from(grouped, ([name, values]): [string, string] => [
      name,
      values.length === 1 ? (values[0] as string) : JSON.stringify(values),
    ]),
  );
  return { payload, challengeToken, control };
}

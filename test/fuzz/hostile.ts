import fc from 'fast-check';

/**
 * Hostile values for the property tests: what an attacker or a broken client sends. Each class
 * is named in docs/decisions/ingest.md#bad-input and management-api.md#bad-input: NUL and other control characters, unpaired surrogates,
 * bidi overrides, very long strings, ids of another prefix or shape, out-of-range numbers and
 * values of the wrong type.
 */
export const NASTY_STRINGS = [
  '',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\udc00\ud800',
  'ok\ud83d',
  '\u202egnp.exe',
  '\u2066x\u2069\u200f',
  '\u0001\u001f\u007f\u0085\u009f',
  '\r\n\t',
  '\ufeff\ufffe\uffff',
  '😀👩‍👩‍👧',
  '%00',
  '%ED%A0%80',
  '../../etc/passwd',
  "' OR 1=1 --",
  '$where',
  'frm_',
  'frm_01JX0000000000000000000000',
  'frm_0000000000000000000000000I',
  'FRM_00000000000000000000000000',
  'sub_00000000000000000000000000',
  'a'.repeat(2_100),
  'é'.repeat(40_000),
];

const PIECES = ['\u0000', '\ud800', '\udc00', '\u202e', '\u0007', 'a', 'é', '😀', ' ', '%', '\\', '"', '<'];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  {
    weight: 2,
    arbitrary: fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 12 }).map((a) => a.join('')),
  },
);

export const hostileNumber: fc.Arbitrary<number | string> = fc.oneof(
  fc.constantFrom(-1, 0, 1, 101, 2 ** 31, 2 ** 53 + 1, 1e308, -1e308, 0.5, '1e3', '-0', '0x10', 'NaN', 'Infinity', ''),
  fc.integer(),
);

/** A value of the wrong type for anything. */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.boolean(),
  fc.array(hostileString, { maxLength: 2 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 2 }),
  hostileString,
);

/**
 * Percent-encodes any JS string, an unpaired surrogate included (as the three bytes WTF-8 gives it,
 * which are not valid UTF-8): what a raw client can put in a path or a query.
 */
export function pct(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    const next = value.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(value.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else out += encodeURIComponent(value[i] as string);
  }
  return out;
}

/** Shortens a value for the printed summary. */
export function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...(${text.length})` : text;
}

import fc from 'fast-check';
import { isIndexName, orderedObject, parseJsonOrdered } from './ordered-json';

/** Names that sort differently as text, as numbers and by length, and names JavaScript treats specially. */
const names = fc.oneof(
  fc.constantFrom('b', 'a', '10', '9', '0', '01', 'aa', '_x', 'é', '日本', '__proto__', 'constructor', '4294967295'),
  fc.string({ minLength: 1, maxLength: 6 }),
  fc.nat({ max: 100_000 }).map(String),
);
const entries = fc.uniqueArray(fc.tuple(names, fc.string()), { selector: ([name]) => name, maxLength: 12 });

/** The JSON text of these entries as an object, in this order. */
const textOf = (list: [string, unknown][]) =>
  `{${list.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`).join(',')}}`;

describe('ordered JSON', () => {
  it('knows the names a JavaScript object would move ahead', () => {
    expect(['0', '9', '10', '4294967294'].filter(isIndexName)).toHaveLength(4);
    expect(['01', '-1', '1.5', '4294967295', ' 1', 'a'].filter(isIndexName)).toEqual([]);
  });

  it('parses objects with their names in written order, nested ones too, and writes them back the same', () => {
    fc.assert(
      fc.property(entries, entries, (all, inner) => {
        const outer = all.filter(([name]) => name !== 'nested');
        const text = textOf([...outer, ['nested', 'INNER']]).replace('"INNER"', () => textOf(inner));
        const value = parseJsonOrdered(text) as Record<string, unknown>;
        expect(Object.keys(value)).toEqual([...outer.map(([name]) => name), 'nested']);
        expect(Object.keys(value['nested'] as object)).toEqual(inner.map(([name]) => name));
        expect(JSON.stringify(value)).toBe(text);
      }),
    );
  });

  it('keeps the given order when names are added or removed later, and reads like a plain object', () => {
    const fields = orderedObject([
      ['10', 'ten'],
      ['9', 'nine'],
      ['b', 'bee'],
    ]);
    fields['1'] = 'one';
    delete fields['9'];
    expect(Object.keys(fields)).toEqual(['10', 'b', '1']);
    expect(Object.entries(fields)).toEqual([
      ['10', 'ten'],
      ['b', 'bee'],
      ['1', 'one'],
    ]);
    expect(fields['10']).toBe('ten');
    expect('9' in fields).toBe(false);
    expect(JSON.stringify(fields)).toBe('{"10":"ten","b":"bee","1":"one"}');
  });

  it('refuses what JSON.parse refuses', () => {
    for (const text of ['{"1":1,}', '{"1":1', "{'1':1}", '{"1":1} x', ''])
      expect(() => parseJsonOrdered(text)).toThrow(SyntaxError);
  });
});

/**
 * JSON objects that keep the order of their names, numeric names included.
 *
 * A JavaScript object lists integer-like names ("9", "10") first and in numeric order, whatever
 * order they were written in; every other name keeps its insertion order. A form's fields are
 * kept in posted order end to end (docs/decisions/ingest.md#posted-field-order), so an object with
 * such a name is a Proxy that lists its names in the order given: `Object.keys`, `Object.entries`,
 * `for…in` and `JSON.stringify` all follow it. Objects without one are plain, null-prototype
 * objects (as cheap as ever), and `__proto__` or `constructor` are names like any other.
 *
 * Copying such an object into a plain one (`{ ...o }`, `Object.fromEntries`, `Object.assign({}, o)`)
 * loses the order again: pass it on as it is.
 *
 * No imports but jsonc-parser: the console bundles this file too.
 */
import { parseTree, type Node } from 'jsonc-parser';

const INDEX_NAME = /^(?:0|[1-9]\d{0,9})$/;

/** Whether a JavaScript object would move this name ahead of the others (an array index). */
export function isIndexName(name: string): boolean {
  return INDEX_NAME.test(name) && Number(name) < 2 ** 32 - 1;
}

/** An object with these entries, listing its names in this order (a later duplicate name overwrites the value in place). */
export function orderedObject<T>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  const target = Object.create(null) as Record<string, T>;
  const names: string[] = [];
  let indexNames = false;
  for (const [name, value] of entries) {
    if (!Object.prototype.hasOwnProperty.call(target, name)) names.push(name);
    Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
    if (!indexNames && isIndexName(name)) indexNames = true;
  }
  return indexNames ? inOrder(target, names) : target;
}

function inOrder<T>(target: Record<string, T>, names: string[]): Record<string, T> {
  return new Proxy(target, {
    ownKeys: () => names.slice(),
    defineProperty(t, name, descriptor) {
      if (typeof name === 'string' && !Object.prototype.hasOwnProperty.call(t, name)) names.push(name);
      return Reflect.defineProperty(t, name, descriptor);
    },
    deleteProperty(t, name) {
      const at = typeof name === 'string' ? names.indexOf(name) : -1;
      if (at >= 0) names.splice(at, 1);
      return Reflect.deleteProperty(t, name);
    },
  });
}

/** A quoted integer-like name followed by a colon: only text with one needs the ordered parse. */
const INDEX_KEY_IN_TEXT = /"(?:0|[1-9]\d{0,9})"\s*:/;

/**
 * `JSON.parse`, keeping the written order of every object's names. Text without an integer-like
 * name (nearly all of it) is parsed by `JSON.parse` alone; other text is checked by it (same
 * errors) and read again in order.
 */
export function parseJsonOrdered(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!INDEX_KEY_IN_TEXT.test(text)) return value;
  const tree = parseTree(text);
  return tree ? valueOf(tree) : value;
}

function valueOf(node: Node): unknown {
  switch (node.type) {
    case 'object':
      return orderedObject(
        (node.children ?? []).map((property) => {
          const [name, value] = property.children ?? [];
          return [String(name?.value), value ? valueOf(value) : null] as const;
        }),
      );
    case 'array':
      return (node.children ?? []).map(valueOf);
    default:
      return node.value;
  }
}

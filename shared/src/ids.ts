import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/** Every id prefix in use. IDs are `<prefix>_<ULID>`: unique, URL-safe, sortable by creation time. */
export const ID_PREFIXES = {
  account: 'acc',
  apiKey: 'key',
  form: 'frm',
  submission: 'sub',
  file: 'fil',
  webhook: 'wh',
  delivery: 'whd',
  event: 'evt',
  notification: 'ntf',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/**
 * ulid's default random source makes one crypto call per character; drawing the same crypto bytes
 * from a pooled buffer is as random and much cheaper on the ingest hot path.
 */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;
function randomUnit(): number {
  if (poolAt >= pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return (pool[poolAt++] as number) / 0x100;
}

const nextUlid = monotonicFactory(randomUnit);

export function newId(kind: IdKind, now: number = Date.now()): string {
  return `${ID_PREFIXES[kind]}_${nextUlid(now).toLowerCase()}`;
}

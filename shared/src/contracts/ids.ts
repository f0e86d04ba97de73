import { randomFillSync } from 'node:crypto';
import { decodeTime, encodeTime, monotonicFactory } from 'ulid';

/**
 * Ids: `<prefix>_<ULID>`, sortable by the time they were made, so a submission's id says when it was received
 * (`receivedAt`); and the slug pattern of a form's address.
 */

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
  member: 'mem',
  user: 'usr',
  auditEntry: 'aud',
  savedView: 'vw',
  project: 'prj',
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

/** The least id of that kind made at `time` (ms): every id made earlier sorts below it, every later one above. */
export function firstIdAt(kind: IdKind, time: number): string {
  return `${ID_PREFIXES[kind]}_${encodeTime(time, 10).toLowerCase()}${'0'.repeat(16)}`;
}

const ID_PATTERN = /^[a-z]{2,3}_[0-9a-hjkmnp-tv-z]{26}$/;

/** The JSON-schema pattern of an id of that kind (a path parameter that does not match it is a 404 without a query). */
export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIXES[kind]}_[0-9a-hjkmnp-tv-z]{26}$`;
}

/** True when `value` is an id of that kind (used to answer 404 early for garbage ids). */
export function isId(kind: IdKind, value: string): boolean {
  return ID_PATTERN.test(value) && value.startsWith(`${ID_PREFIXES[kind]}_`);
}

/** What a form slug looks like: lower-case letters, digits and inner hyphens (a post to anything else is a 404 without a query). */
export const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$';

/** When an id was made (ms), from its ULID: a submission's id says when it was received. */
export function receivedAt(id: string): number {
  return decodeTime(id.slice(id.indexOf('_') + 1).toUpperCase());
}

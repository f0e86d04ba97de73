import { isId, problem, toTimestamp, type IdKind } from '@intake/shared/contracts';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Cursors are opaque to clients: base64url of the last row's position (its time and id), newest first. */
export function encodeCursor(at: Date, id: string): string {
  return Buffer.from(JSON.stringify([toTimestamp(at), id])).toString('base64url');
}

/**
 * Reads a cursor back. Only what `encodeCursor` writes is accepted (our timestamp shape and an id
 * of `kind`), so nothing else reaches the query: any other value is 422 naming `query/cursor`.
 */
export function decodeCursor(cursor: string, kind: IdKind): { at: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof at === 'string' && TIMESTAMP.test(at) && typeof id === 'string' && isId(kind, id)) {
      const when = new Date(at);
      if (!Number.isNaN(when.getTime())) return { at: when, id };
    }
  } catch {
    // falls through to the problem below
  }
  throw problem('validation-failed', 'The cursor is not one this API returned', {
    errors: [{ field: 'query/cursor', message: 'is not a valid cursor' }],
  });
}

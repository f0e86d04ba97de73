import type { IncomingMessage } from 'node:http';
import { parseJsonOrdered, unstorableFields, type BlobStore } from '@intake/shared/base';
import { problem } from '@intake/shared/contracts';
import { type StoredUpload } from '@intake/shared/submissions';
import { honeypotFilled } from '../judge/spam';
import { refuseUnstorable, strictUtf8, type Fields } from './fields';
import { LIMITS } from './limits';
import { parseMultipart } from './multipart';

export type BodyKind = 'urlencoded' | 'multipart' | 'json';

/**
 * The post's fields, in order, and its files (streamed to storage under `keyPrefix`; none once
 * the honeypot is filled). Bodies too large for the plan are refused before they are read.
 */
export async function readBody(props: {
  req: IncomingMessage;
  kind: BodyKind | undefined;
  contentLength: number | undefined;
  blobs: BlobStore;
  maxFileBytes: number;
  keyPrefix: string;
  honeypotField: string;
}): Promise<{ fields: Fields; files: StoredUpload[] }> {
  const { req, maxFileBytes, contentLength: length } = props;
  switch (props.kind) {
    case 'multipart': {
      if (length !== undefined && maxFileBytes <= 0 && length > LIMITS.bodyBytes)
        throw problem(
          'uploads-not-allowed',
          'The plan of this form’s account does not include file uploads, and the body is too large for fields alone',
        );
      if (length !== undefined && length > LIMITS.files * maxFileBytes + LIMITS.bodyBytes)
        throw problem(
          'file-too-large',
          `Each file may be at most ${maxFileBytes} bytes on this plan (and at most ${LIMITS.files} ` +
            `files); this body is larger than that allows`,
        );
      return parseMultipart({
        req,
        blobs: props.blobs,
        keyPrefix: props.keyPrefix,
        maxFileBytes,
        skipFiles: (fields) => honeypotFilled(fields, props.honeypotField),
      });
    }
    case 'json':
      return { fields: parseJson(await readBounded(req, length)), files: [] };
    case 'urlencoded':
      return { fields: parseUrlencoded(await readBounded(req, length)), files: [] };
    default:
      if (length === 0 || (length === undefined && !req.headers['transfer-encoding']))
        throw problem('bad-body', 'The request has no body: post the form’s fields');
      throw problem(
        'unsupported-media-type',
        'Send application/x-www-form-urlencoded, multipart/form-data or application/json',
      );
  }
}

/** Reads at most LIMITS.bodyBytes (413 body-too-large beyond, before reading when Content-Length says so). */
export async function readBounded(req: IncomingMessage, declaredLength: number | undefined): Promise<Buffer> {
  if (declaredLength !== undefined && declaredLength > LIMITS.bodyBytes) throw tooLarge();
  // A small post has usually arrived whole by now (often in the packet of its headers): Node has
  // put all of it in the request's buffer, which one read takes at once.
  if (req.complete && req.readableFlowing !== true) {
    const whole = (req.read() as Buffer | null) ?? Buffer.alloc(0);
    if (whole.length > LIMITS.bodyBytes) throw tooLarge();
    return whole;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > LIMITS.bodyBytes) throw tooLarge();
      chunks.push(chunk);
    }
  } catch (err) {
    if ((err as { slug?: string }).slug) throw err;
    throw problem('bad-body', 'The request body ended before it was complete');
  }
  return Buffer.concat(chunks, size);
}

function tooLarge() {
  return problem('body-too-large', `A form or JSON body may be at most ${LIMITS.bodyBytes} bytes`);
}

function decodeUtf8(bytes: Uint8Array, decoder = strictUtf8): string {
  try {
    return decoder.decode(bytes);
  } catch {
    throw problem('bad-body', 'The body is not valid UTF-8');
  }
}

/** Strict UTF-8 that keeps a byte-order mark as text, as the WHATWG form parser does. */
const strictUtf8KeepingBom = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * application/x-www-form-urlencoded as the WHATWG parser reads it, but decoded as UTF-8 strictly
 * (percent-escapes included): bytes that are not UTF-8 are refused, not replaced.
 */
export function parseUrlencoded(raw: Buffer): Fields {
  const text = decodeUtf8(raw, strictUtf8KeepingBom);
  const fields: Fields = [];
  if (text === '') return fields;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = eq === -1 ? pair : pair.slice(0, eq);
    const value = eq === -1 ? '' : pair.slice(eq + 1);
    fields.push([formDecode(name), formDecode(value)]);
    if (fields.length > LIMITS.fields) break;
  }
  return fields;
}

/**
 * One name or value of a form body (already valid UTF-8): `+` is a space, `%XX` a byte of UTF-8,
 * strictly (escapes that do not make UTF-8 are 400 bad-body), and a `%` not followed by two hex
 * digits stays a `%`, as browsers keep it.
 */
function formDecode(part: string): string {
  const spaced = part.includes('+') ? part.replace(/\+/g, ' ') : part;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced.replace(/%(?![0-9a-fA-F]{2})/g, '%25'));
  } catch {
    throw problem('bad-body', 'The body is not valid UTF-8');
  }
}

/** application/json: one object; its values stored as strings (non-strings JSON-stringified). */
export function parseJson(raw: Buffer): Fields {
  const text = decodeUtf8(raw);
  if (jsonDepth(text) > LIMITS.jsonDepth) {
    throw problem('validation-failed', `JSON bodies may nest at most ${LIMITS.jsonDepth} levels`, {
      errors: [{ field: 'body', message: `nests deeper than ${LIMITS.jsonDepth} levels` }],
    });
  }
  let value: unknown;
  try {
    // Every name an own data property (`__proto__` included: names are data, never prototypes), in written order.
    value = parseJsonOrdered(text);
  } catch {
    throw problem('bad-body', 'The body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw problem('bad-body', 'A JSON body must be an object of fields');
  // Every string in it, nested ones and names included, before non-strings are stringified (which
  // would escape a NUL or a lone surrogate into text that still carries it to every reader).
  refuseUnstorable(unstorableFields(value, 'body'));
  return Object.entries(value as Record<string, unknown>).map(([name, v]) => [
    name,
    typeof v === 'string' ? v : JSON.stringify(v),
  ]);
}

/** Deepest nesting of objects and arrays, ignoring brackets inside strings. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return max;
}

/** The origin a browser posted from: the Origin header, else the Referer's origin ("null" counts as an origin). */
export function requestOrigin(origin: string | undefined, referer: string | undefined): string | undefined {
  if (origin) return origin;
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return 'null';
  }
}

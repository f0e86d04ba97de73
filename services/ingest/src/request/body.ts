import type { IncomingMessage } from 'node:http';
import { problem, type BlobStore, type StoredUpload } from '@intake/shared';
import { LIMITS } from '../rules/limits';
import { honeypotFilled } from '../rules/spam';
import type { Fields } from './fields';
import { parseMultipart } from './multipart';
import { parseJson, parseUrlencoded, readBounded } from './simple';

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

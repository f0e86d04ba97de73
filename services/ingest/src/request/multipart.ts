import type { IncomingMessage } from 'node:http';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import busboy from 'busboy';
import { newId, problem, type BlobStore, type Problem, type StoredUpload } from '@intake/shared';
import { LIMITS } from '../rules/limits';
import { checkName, strictUtf8, type Fields } from './fields';

export interface MultipartResult {
  fields: Fields;
  files: StoredUpload[];
}

/** Errors once more than `max` bytes went through, so the upload fails before the whole file is read. */
class SizeLimit extends Transform {
  bytes = 0;
  constructor(private readonly max: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.max)
      done(problem('file-too-large', `Each file may be at most ${this.max} bytes on this plan`));
    else done(null, chunk);
  }
}

/**
 * Streams a multipart body: fields are collected (bounded), each file part goes straight to the
 * blob store under `<keyPrefix>/<file id>` through a size limit. Once `skipFiles()` says so (a
 * filled honeypot), later files are drained, not stored. On any failure every stored object is
 * deleted before the error is thrown, so a refused request leaves nothing behind.
 */
export function parseMultipart(props: {
  req: IncomingMessage;
  blobs: BlobStore;
  keyPrefix: string;
  maxFileBytes: number;
  skipFiles(fields: Fields): boolean;
}): Promise<MultipartResult> {
  const { req, blobs, keyPrefix, maxFileBytes } = props;
  return new Promise<MultipartResult>((resolve, reject) => {
    const fields: Fields = [];
    const files: StoredUpload[] = [];
    const puts: Promise<unknown>[] = [];
    const active = new Set<Readable>();
    let fieldBytes = 0;
    let failed: Problem | Error | undefined;
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: req.headers,
        defCharset: 'latin1',
        defParamCharset: 'utf8',
        limits: {
          fieldNameSize: LIMITS.fieldNameChars * 4,
          fieldSize: LIMITS.bodyBytes,
          fields: LIMITS.fields,
          files: LIMITS.files,
          parts: LIMITS.fields + LIMITS.files,
        },
      });
    } catch {
      reject(problem('bad-body', 'The multipart body has no valid boundary'));
      return;
    }

    const cleanUp = async (): Promise<void> => {
      await Promise.allSettled(puts);
      const keys = files.map((f) => f.storage_key);
      if (keys.length) await blobs.delete(keys).catch(() => undefined);
    };
    const fail = (err: Problem | Error): void => {
      if (failed) return;
      failed = err;
      req.unpipe(bb);
      req.resume();
      for (const stream of active) stream.destroy(err);
      void cleanUp().then(() => reject(err));
    };

    // busboy reports a part with `name=""` as having no name: it is the empty field name.
    bb.on('field', (partName: string | undefined, value, info) => {
      const name = partName ?? '';
      if (failed) return;
      if (info.nameTruncated || info.valueTruncated)
        return fail(problem('body-too-large', `Field values may be at most ${LIMITS.bodyBytes} bytes together`));
      fieldBytes += value.length;
      if (fieldBytes > LIMITS.bodyBytes)
        return fail(problem('body-too-large', `Field values may be at most ${LIMITS.bodyBytes} bytes together`));
      try {
        checkHeaderText(name, 'name');
        checkName(name);
        fields.push([name, strictUtf8.decode(Buffer.from(value, 'latin1'))]);
      } catch (err) {
        fail(
          (err as { slug?: string }).slug
            ? (err as Problem)
            : problem('bad-body', `The value of "${name}" is not valid UTF-8`),
        );
      }
    });

    bb.on('file', (partName: string | undefined, stream, info) => {
      const name = partName ?? '';
      // A file input left empty comes as a part without a filename: nothing to store.
      if (failed || props.skipFiles(fields) || !info.filename) return void stream.resume();
      if (maxFileBytes <= 0) {
        stream.resume();
        return fail(problem('uploads-not-allowed', 'The plan of this form’s account does not include file uploads'));
      }
      try {
        checkHeaderText(name, 'name');
        checkHeaderText(info.filename, 'filename');
        checkName(name);
      } catch (err) {
        stream.resume();
        return fail(err as Problem);
      }
      const id = newId('file');
      const file: StoredUpload = {
        id,
        field: name,
        filename: printable(info.filename).slice(0, 255) || 'file',
        content_type: printable(info.mimeType || '').slice(0, 255) || 'application/octet-stream',
        size: 0,
        storage_key: `${keyPrefix}/${id}`,
      };
      const limit = new SizeLimit(maxFileBytes);
      active.add(limit);
      // Its error reaches us through the put's rejection; this keeps a late one from going unhandled.
      limit.on('error', () => undefined);
      stream.on('error', (err) => limit.destroy(err));
      const put = blobs.put(file.storage_key, stream.pipe(limit), file.content_type).then(
        (size) => {
          active.delete(limit);
          file.size = size;
          files.push(file);
        },
        (err: Error) => {
          active.delete(limit);
          stream.resume();
          fail(err);
        },
      );
      puts.push(put);
    });

    bb.on('filesLimit', () => fail(problem('body-too-large', `A submission may carry at most ${LIMITS.files} files`)));
    bb.on('fieldsLimit', () =>
      fail(
        problem('validation-failed', `A submission may have at most ${LIMITS.fields} fields`, {
          errors: [{ field: 'body', message: `has more than ${LIMITS.fields} fields` }],
        }),
      ),
    );
    bb.on('partsLimit', () => fail(problem('body-too-large', 'The multipart body has too many parts')));
    bb.on('error', () => fail(problem('bad-body', 'The multipart body could not be parsed')));
    bb.on('close', () => {
      void Promise.allSettled(puts).then(() => {
        if (failed) return;
        if (props.skipFiles(fields) && files.length) {
          // The honeypot came after some files: spam stores no files.
          const keys = files.splice(0).map((f) => f.storage_key);
          void blobs
            .delete(keys)
            .catch(() => undefined)
            .then(() => resolve({ fields, files }));
          return;
        }
        resolve({ fields, files });
      });
    });
    req.on('aborted', () => fail(problem('bad-body', 'The request was aborted before its body was complete')));
    req.on('error', () => fail(problem('bad-body', 'The request failed before its body was complete')));
    req.pipe(bb);
  });
}

/**
 * A part's name and filename are header parameters that busboy decodes as UTF-8 (RFC 7578 and
 * RFC 5987 `filename*=UTF-8''...`), turning bytes that are not UTF-8 into U+FFFD. Such a name is
 * not the one the client meant: 400 bad-body, like undecodable bytes anywhere else in a post.
 */
function checkHeaderText(value: string, what: 'name' | 'filename'): void {
  if (value.includes('\uFFFD')) throw problem('bad-body', `A part's ${what} is not valid UTF-8`);
}

/** A part's filename or type as stored and shown: control characters (NUL included, which Postgres text cannot hold) removed. */
function printable(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f]/g, '');
}

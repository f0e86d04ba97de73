import type { IncomingMessage } from 'node:http';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import busboy from 'busboy';
import { type BlobStore } from '@intake/shared/base';
import { newId, problem, type Problem } from '@intake/shared/contracts';
import { type StoredUpload } from '@intake/shared/submissions';
import { LIMITS } from './limits';
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

interface MultipartProps {
  req: IncomingMessage;
  blobs: BlobStore;
  keyPrefix: string;
  maxFileBytes: number;
  skipFiles(fields: Fields): boolean;
}

/**
 * Streams a multipart body: fields are collected (bounded), each file part goes straight to the
 * blob store under `<keyPrefix>/<file id>` through a size limit. Once `skipFiles()` says so (a
 * filled honeypot), later files are drained, not stored. On any failure every stored object is
 * deleted before the error is thrown, so a refused request leaves nothing behind.
 */
export function parseMultipart(props: MultipartProps): Promise<MultipartResult> {
  return new Promise<MultipartResult>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: props.req.headers,
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
    new MultipartParse(props, bb, { resolve, reject }).start();
  });
}

/** One multipart body being read: what it has given so far, and how each of busboy's events is handled. */
class MultipartParse {
  private readonly fields: Fields = [];
  private readonly files: StoredUpload[] = [];
  private readonly puts: Promise<unknown>[] = [];
  private readonly active = new Set<Readable>();
  private fieldBytes = 0;
  private failed: Problem | Error | undefined;

  constructor(
    private readonly props: MultipartProps,
    private readonly bb: busboy.Busboy,
    private readonly settle: { resolve(result: MultipartResult): void; reject(err: unknown): void },
  ) {}

  /** Listens to busboy's events and the request's, and pipes the request in. */
  start(): void {
    const { bb } = this;
    const { req } = this.props;
    // busboy reports a part with `name=""` as having no name: it is the empty field name.
    bb.on('field', (name: string | undefined, value, info) => this.field(name ?? '', value, info));
    bb.on('file', (name: string | undefined, stream, info) => this.file(name ?? '', stream, info));
    bb.on('filesLimit', () =>
      this.fail(problem('body-too-large', `A submission may carry at most ${LIMITS.files} files`)),
    );
    bb.on('fieldsLimit', () =>
      this.fail(
        problem('validation-failed', `A submission may have at most ${LIMITS.fields} fields`, {
          errors: [{ field: 'body', message: `has more than ${LIMITS.fields} fields` }],
        }),
      ),
    );
    bb.on('partsLimit', () => this.fail(problem('body-too-large', 'The multipart body has too many parts')));
    bb.on('error', () => this.fail(problem('bad-body', 'The multipart body could not be parsed')));
    bb.on('close', () => void this.finish());
    req.on('aborted', () => this.fail(problem('bad-body', 'The request was aborted before its body was complete')));
    req.on('error', () => this.fail(problem('bad-body', 'The request failed before its body was complete')));
    req.pipe(bb);
  }

  /** A field: its name checked, its value counted against the body's limit and decoded as UTF-8. */
  private field(name: string, value: string, info: busboy.FieldInfo): void {
    if (this.failed) return;
    if (info.nameTruncated || info.valueTruncated)
      return this.fail(problem('body-too-large', `Field values may be at most ${LIMITS.bodyBytes} bytes together`));
    this.fieldBytes += value.length;
    if (this.fieldBytes > LIMITS.bodyBytes)
      return this.fail(problem('body-too-large', `Field values may be at most ${LIMITS.bodyBytes} bytes together`));
    try {
      checkHeaderText(name, 'name');
      checkName(name);
      this.fields.push([name, strictUtf8.decode(Buffer.from(value, 'latin1'))]);
    } catch (err) {
      this.fail(
        (err as { slug?: string }).slug
          ? (err as Problem)
          : problem('bad-body', `The value of "${name}" is not valid UTF-8`),
      );
    }
  }

  /** A file part: drained when there is nothing to store, refused when the plan has no uploads, else stored. */
  private file(name: string, stream: Readable, info: busboy.FileInfo): void {
    // A file input left empty comes as a part without a filename: nothing to store.
    if (this.failed || this.props.skipFiles(this.fields) || !info.filename) return void stream.resume();
    if (this.props.maxFileBytes <= 0) {
      stream.resume();
      return this.fail(problem('uploads-not-allowed', 'The plan of this form’s account does not include file uploads'));
    }
    try {
      checkHeaderText(name, 'name');
      checkHeaderText(info.filename, 'filename');
      checkName(name);
    } catch (err) {
      stream.resume();
      return this.fail(err as Problem);
    }
    this.store(name, stream, { filename: info.filename, mimeType: info.mimeType });
  }

  /** Streams one file to the blob store through the plan's size limit; it joins `files` once stored. */
  private store(name: string, stream: Readable, info: { filename: string; mimeType: string }): void {
    const id = newId('file');
    const file: StoredUpload = {
      id,
      field: name,
      filename: printable(info.filename).slice(0, 255) || 'file',
      content_type: printable(info.mimeType || '').slice(0, 255) || 'application/octet-stream',
      size: 0,
      storage_key: `${this.props.keyPrefix}/${id}`,
    };
    const limit = new SizeLimit(this.props.maxFileBytes);
    this.active.add(limit);
    // Its error reaches us through the put's rejection; this keeps a late one from going unhandled.
    limit.on('error', () => undefined);
    stream.on('error', (err) => limit.destroy(err));
    const put = this.props.blobs.put(file.storage_key, stream.pipe(limit), file.content_type).then(
      (size) => {
        this.active.delete(limit);
        file.size = size;
        this.files.push(file);
      },
      (err: Error) => {
        this.active.delete(limit);
        stream.resume();
        this.fail(err);
      },
    );
    this.puts.push(put);
  }

  /** The body is read: once every file is stored, the result (without files when the honeypot came after some). */
  private async finish(): Promise<void> {
    await Promise.allSettled(this.puts);
    if (this.failed) return;
    const { fields, files } = this;
    if (this.props.skipFiles(fields) && files.length) {
      // The honeypot came after some files: spam stores no files.
      const keys = files.splice(0).map((f) => f.storage_key);
      await this.props.blobs.delete(keys).catch(() => undefined);
    }
    this.settle.resolve({ fields, files });
  }

  /** The first failure stops the reading, and rejects once every stored object is deleted. */
  private fail(err: Problem | Error): void {
    if (this.failed) return;
    this.failed = err;
    this.props.req.unpipe(this.bb);
    this.props.req.resume();
    for (const stream of this.active) stream.destroy(err);
    void this.cleanUp().then(() => this.settle.reject(err));
  }

  /** Deletes every stored object, once the puts in flight have ended. */
  private async cleanUp(): Promise<void> {
    await Promise.allSettled(this.puts);
    const keys = this.files.map((f) => f.storage_key);
    if (keys.length) await this.props.blobs.delete(keys).catch(() => undefined);
  }
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

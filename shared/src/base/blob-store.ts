import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Where submission files live: S3 (or any S3-compatible store) when configured, a local directory otherwise. */
export interface BlobStore {
  /** Streams `body` to `key`; resolves with the bytes written. Rejects (and leaves nothing behind) when the stream errors. */
  put(key: string, body: Readable, contentType: string): Promise<number>;
  get(key: string): Promise<Readable>;
  delete(keys: string[]): Promise<void>;
  readonly kind: 'local' | 's3';
}

export class LocalBlobStore implements BlobStore {
  readonly kind = 'local' as const;
  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    const full = path.resolve(this.root, key);
    if (!full.startsWith(path.resolve(this.root) + path.sep)) throw new Error(`Invalid storage key ${key}`);
    return full;
  }

  /**
   * Durable before it resolves, like an S3 PUT: the file is flushed to disk before it is closed,
   * then every directory from the file's up to the root (a directory another, concurrent put
   * created may not be flushed yet; a clean one flushes at once), so a submission committed after
   * its files never points at a file a crash took away.
   */
  async put(key: string, body: Readable, _contentType: string): Promise<number> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    const out = createWriteStream(file, { flush: true });
    try {
      await pipeline(body, out);
      const root = path.resolve(this.root);
      const directories = [root];
      for (let dir = path.dirname(file); dir !== root && dir.startsWith(root + path.sep); dir = path.dirname(dir))
        directories.push(dir);
      await Promise.all(directories.map(syncDirectory));
    } catch (err) {
      // The file is opened asynchronously: a source that fails at once can reject the pipeline
      // before the open, which would then create the file after our rm. Wait for it to close.
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      await rm(file, { force: true });
      await this.pruneEmptyParents(file);
      throw err;
    }
    return (await stat(file)).size;
  }

  async get(key: string): Promise<Readable> {
    const file = this.pathOf(key);
    await stat(file);
    return createReadStream(file);
  }

  async delete(keys: string[]): Promise<void> {
    await Promise.all(keys.map((key) => rm(this.pathOf(key), { force: true })));
    await Promise.all(keys.map((key) => this.pruneEmptyParents(this.pathOf(key))));
  }

  /** Removes directories left empty by a delete, up to (not including) the root. */
  private async pruneEmptyParents(file: string): Promise<void> {
    const root = path.resolve(this.root);
    for (let dir = path.dirname(file); dir.startsWith(root + path.sep); dir = path.dirname(dir)) {
      try {
        await rmdir(dir);
      } catch {
        return; // not empty (or already gone): stop here
      }
    }
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

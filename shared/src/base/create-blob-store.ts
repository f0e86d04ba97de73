import path from 'node:path';
import type { Config } from './config';
import { LocalBlobStore, type BlobStore } from './blob-store';

/** The blob store the configuration names: S3-compatible object storage when S3 is set, else a local folder. */
export function createBlobStore(config: Config): BlobStore {
  if (config.s3Enabled) {
    // Loaded lazily so a local set-up never pays for the AWS SDK.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { S3BlobStore } = require('./s3-blob-store') as typeof import('./s3-blob-store');
    return new S3BlobStore(config);
  }
  return new LocalBlobStore(path.resolve(config.FILES_DIR));
}

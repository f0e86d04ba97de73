import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { ConfigOverrides } from '@intake/shared/testing';
// s3rver has no types; it is a real S3-compatible server on loopback.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
};

export const BUCKET = 'intake-test';

/** An S3-compatible server on a free loopback port, and the config that points Intake at it. */
export async function startS3(): Promise<{
  config: ConfigOverrides;
  listKeys(prefix?: string): Promise<string[]>;
  close(): Promise<void>;
}> {
  const directory = mkdtempSync(path.join(tmpdir(), 'intake-s3-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: BUCKET }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  return {
    config: {
      S3_ENDPOINT: endpoint,
      S3_BUCKET: BUCKET,
      S3_FORCE_PATH_STYLE: true,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    async listKeys(prefix) {
      const out = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
      return (out.Contents ?? []).map((o) => o.Key as string);
    },
    async close() {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** Every file under a local blob directory, as keys. */
export function localKeys(root: string, prefix = ''): string[] {
  const dir = path.join(root, prefix);
  try {
    return (
      readdirSync(dir, { recursive: true, withFileTypes: true }) as {
        isFile(): boolean;
        name: string;
        parentPath?: string;
        path?: string;
      }[]
    )
      .filter((e) => e.isFile())
      .map((e) => path.relative(root, path.join(e.parentPath ?? e.path ?? dir, e.name)));
  } catch {
    return [];
  }
}

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { LocalBlobStore } from './blob-store';

describe('LocalBlobStore', () => {
  let root: string;
  let store: LocalBlobStore;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'intake-blobs-'));
    store = new LocalBlobStore(root);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('stores, reads back and deletes, leaving no empty directories behind', async () => {
    expect(await store.put('acc_1/frm_1/sub_1/fil_1', Readable.from(['hello ', 'world']), 'text/plain')).toBe(11);
    await store.put('acc_1/frm_1/sub_2/fil_2', Readable.from(['other']), 'text/plain');
    const chunks: Buffer[] = [];
    for await (const chunk of await store.get('acc_1/frm_1/sub_1/fil_1')) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('hello world');

    await store.delete(['acc_1/frm_1/sub_1/fil_1']);
    expect(readdirSync(path.join(root, 'acc_1/frm_1'))).toEqual(['sub_2']);
    await store.delete(['acc_1/frm_1/sub_2/fil_2']);
    expect(readdirSync(root)).toEqual([]);
  });

  it('removes a partly written file when the stream fails', async () => {
    let reads = 0;
    const failing = new Readable({
      read() {
        if (reads++ === 0) this.push('partial');
        else this.destroy(new Error('client went away'));
      },
    });
    await expect(store.put('acc_1/frm_1/sub_1/fil_1', failing, 'text/plain')).rejects.toThrow('client went away');
    expect(readdirSync(root)).toEqual([]);
  });

  it('refuses keys that escape its root', async () => {
    await expect(store.put('../outside', Readable.from(['x']), 'text/plain')).rejects.toThrow(/Invalid storage key/);
  });
});

import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { eventually } from '@intake/shared/testing';
import { accountWithForm, slugOf, startIngest, submissionsOf, type IngestHarness } from './helpers';
import { localKeys, startS3 } from './files';

const SMALL_LIMIT = 64 * 1024;

type Store = 'local directory' | 'S3';

/**
 * Ingest over the given file store, with a plan whose files may be at most SMALL_LIMIT bytes (`smallForm`);
 * `keys` lists the stored objects under a prefix and `read` reads one back.
 */
function useFileStore(store: Store) {
  const h = {} as IngestHarness;
  let s3: Awaited<ReturnType<typeof startS3>> | undefined;
  let smallPlan: string;
  const keys = async (prefix: string): Promise<string[]> =>
    s3 ? s3.listKeys(prefix) : localKeys(h.platform.config.FILES_DIR, prefix);

  beforeAll(async () => {
    if (store === 'S3') s3 = await startS3();
    Object.assign(h, await startIngest({ ...(s3?.config ?? {}) }));
    expect(h.platform.blobs.kind).toBe(store === 'S3' ? 's3' : 'local');
    smallPlan = `small_${randomBytes(4).toString('hex')}`;
    await h.platform
      .db('plans')
      .insert({ id: smallPlan, name: 'Small files', monthly_quota: 1000, max_file_bytes: SMALL_LIMIT });
  });
  afterAll(async () => {
    await h.close();
    await s3?.close();
  });

  async function smallForm() {
    const f = await accountWithForm(h);
    await h.platform.db('accounts').where({ id: f.account.id }).update({ plan_id: smallPlan });
    return f;
  }

  async function read(key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const c of await h.platform.blobs.get(key)) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  return { h, store, keys, smallForm, read };
}

type FileStore = ReturnType<typeof useFileStore>;

/** Files stored, listed on the submission and in its event, whatever their part names and filenames. */
function storageCases({ h, keys, read }: FileStore) {
  it('streams each file part to storage, lists it on the submission and in the event', async () => {
    const { account, form, post } = await accountWithForm(h);
    const big = randomBytes(300 * 1024);
    const body = new FormData();
    body.append('name', 'Ada');
    body.append('cv', new Blob([big], { type: 'application/pdf' }), 'cv.pdf');
    body.append('photos', new Blob(['one']), 'a.txt');
    body.append('photos', new Blob(['two']), 'b.txt');
    body.append('empty', new Blob([]), '');
    const res = await post(body);
    expect(res.status).toBe(201);
    expect(res.body.files).toBe(3);
    const [row] = await submissionsOf(h, form.id);
    expect(row).toMatchObject({ payload: { name: 'Ada' }, file_count: 3, file_bytes: big.length + 6 });
    const files = await h.platform.db('submission_files').where({ submission_id: res.body.id }).orderBy('field');
    expect(files.map((f) => [f.field, f.filename, f.size])).toEqual(
      expect.arrayContaining([
        ['cv', 'cv.pdf', big.length],
        ['photos', 'a.txt', 3],
        ['photos', 'b.txt', 3],
      ]),
    );
    const cv = files.find((f) => f.field === 'cv');
    expect(cv.content_type).toBe('application/pdf');
    expect(cv.storage_key).toBe(`${account.id}/${form.id}/${res.body.id}/${cv.id}`);
    expect((await read(cv.storage_key)).equals(big)).toBe(true);
    expect((await keys(`${account.id}/`)).sort()).toEqual(files.map((f) => f.storage_key).sort());
    const event = await h.platform
      .db('outbox')
      .whereRaw("payload->>'submission_id' = ?", [res.body.id as string])
      .first();
    expect(event.payload.files).toHaveLength(3);
    expect(event.payload.file_bytes).toBe(big.length + 6);
  });

  it('stores parts whose name is empty under the empty field name (found by the fuzz test: it was a 500)', async () => {
    const { form, post } = await accountWithForm(h);
    const body =
      '--b\r\ncontent-disposition: form-data; name=""\r\n\r\nvalue\r\n' +
      '--b\r\ncontent-disposition: form-data; name=""; filename="f.txt"\r\n\r\nhello\r\n--b--\r\n';
    const res = await post(body, { 'content-type': 'multipart/form-data; boundary=b' });
    expect([res.status, res.body.files]).toEqual([201, 1]);
    const [row] = await submissionsOf(h, form.id);
    expect(row.payload).toEqual({ '': 'value' });
    const file = await h.platform.db('submission_files').where({ submission_id: res.body.id }).first();
    expect([file.field, file.filename, (await read(file.storage_key)).toString()]).toEqual(['', 'f.txt', 'hello']);
  });

  it('stores a filename with control characters (NUL included) without them, counting the post once (was a 500)', async () => {
    const { account, form, post } = await accountWithForm(h, { quota: 3 });
    const body =
      '--b\r\ncontent-disposition: form-data; name="doc"; filename*=utf-8\'\'a%00b%07.txt\r\n' +
      'content-type: text/plain\r\n\r\nhello\r\n--b--\r\n';
    for (let i = 0; i < 3; i++)
      expect((await post(body, { 'content-type': 'multipart/form-data; boundary=b' })).status).toBe(201);
    expect((await post(body, { 'content-type': 'multipart/form-data; boundary=b' })).status).toBe(402);
    const [row] = await submissionsOf(h, form.id);
    const file = await h.platform.db('submission_files').where({ submission_id: row.id }).first();
    expect([file.filename, file.content_type]).toEqual(['ab.txt', 'text/plain']);
    expect((await h.platform.db('usage_counters').where({ account_id: account.id }).first()).used).toBe(3);
  });
}

/** Plans without uploads and the per-file size limit. */
function limitCases({ h, keys, smallForm }: FileStore) {
  it('413 uploads-not-allowed on a plan without uploads, storing nothing; an empty file input is fine', async () => {
    const { account, form, post } = await accountWithForm(h, { plan: 'free' });
    const withFile = new FormData();
    withFile.append('name', 'Ada');
    withFile.append('cv', new Blob(['x']), 'cv.txt');
    const res = await post(withFile);
    expect([res.status, slugOf(res)]).toEqual([413, 'uploads-not-allowed']);
    expect(await submissionsOf(h, form.id)).toHaveLength(0);
    const emptyInput = new FormData();
    emptyInput.append('name', 'Ada');
    emptyInput.append('cv', new Blob([]), '');
    expect((await post(emptyInput)).status).toBe(201);
    expect(await keys(`${account.id}/`)).toEqual([]);
  });

  it('413 file-too-large for a file over the plan’s limit, leaving no object behind (even after an accepted first file)', async () => {
    const { account, form, post } = await smallForm();
    const body = new FormData();
    body.append('ok', new Blob([randomBytes(1000)]), 'ok.bin');
    body.append('big', new Blob([randomBytes(SMALL_LIMIT + 1)]), 'big.bin');
    const res = await post(body);
    expect([res.status, slugOf(res)]).toEqual([413, 'file-too-large']);
    expect(await submissionsOf(h, form.id)).toHaveLength(0);
    await eventually(async () => (await keys(`${account.id}/`)).length === 0, { message: 'objects removed' });
  });

  it('accepts a file of exactly the limit', async () => {
    const { post } = await smallForm();
    const body = new FormData();
    body.append('f', new Blob([randomBytes(SMALL_LIMIT)]), 'f.bin');
    expect((await post(body)).status).toBe(201);
  });

  it('refuses an oversized Content-Length before reading the body', async () => {
    const { account, form } = await smallForm();
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        `${h.url}/v1/f/${form.slug}`,
        {
          method: 'POST',
          headers: { 'content-type': 'multipart/form-data; boundary=b', 'content-length': String(50 * 1024 * 1024) },
        },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      // Only the start of the body is ever sent: the answer must come without the rest.
      req.write('--b\r\ncontent-disposition: form-data; name="f"; filename="f.bin"\r\n\r\n');
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).type).toMatch(/\/file-too-large$/);
    expect(await keys(`${account.id}/`)).toEqual([]);
  });
}

/** Spam keeps no file, and an aborted upload leaves nothing behind. */
function spamAndAbortCases({ h, store, keys }: FileStore) {
  it.each(['before', 'after'] as const)('stores no file for spam (honeypot %s the file)', async (where) => {
    const { account, form, post } = await accountWithForm(h);
    const body = new FormData();
    if (where === 'before') body.append('_gotcha', 'filled');
    body.append('cv', new Blob([randomBytes(20_000)]), 'cv.bin');
    if (where === 'after') body.append('_gotcha', 'filled');
    const res = await post(body);
    expect(res.body).toEqual({ ok: true, status: 'accepted' });
    const [row] = await submissionsOf(h, form.id);
    expect(row).toMatchObject({ status: 'spam', file_count: 0 });
    expect(await keys(`${account.id}/`)).toEqual([]);
  });

  it('decides spam once: a repeated honeypot whose first value is blank is spam, with no file kept', async () => {
    const { account, form, post } = await accountWithForm(h);
    const body = new FormData();
    body.append('_gotcha', ' ');
    body.append('_gotcha', 'filled');
    body.append('cv', new Blob([randomBytes(2_000)]), 'cv.bin');
    const res = await post(body);
    expect(res.body).toEqual({ ok: true, status: 'accepted' });
    const [row] = await submissionsOf(h, form.id);
    expect(row).toMatchObject({ status: 'spam', spam_reason: 'honeypot', file_count: 0 });
    expect(await keys(`${account.id}/`)).toEqual([]);
  });

  it('leaves no object behind when the client aborts mid-upload', async () => {
    const { account, form } = await accountWithForm(h);
    const req = http.request(`${h.url}/v1/f/${form.slug}`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=b', 'content-length': String(10 * 1024 * 1024) },
    });
    req.on('error', () => undefined);
    req.write(
      '--b\r\ncontent-disposition: form-data; name="f"; filename="f.bin"\r\ncontent-type: application/octet-stream\r\n\r\n',
    );
    req.write(randomBytes(256 * 1024));
    if (store === 'local directory')
      await eventually(async () => (await keys(`${account.id}/`)).length === 1, { message: 'upload started' });
    else await new Promise((resolve) => setImmediate(resolve));
    req.destroy();
    await eventually(
      async () => (await keys(`${account.id}/`)).length === 0 && (await submissionsOf(h, form.id)).length === 0,
      { message: 'nothing left' },
    );
    // Still serving.
    expect(
      (await fetch(`${h.url}/v1/f/${form.slug}`, { method: 'POST', body: new URLSearchParams({ a: '1' }) })).status,
    ).toBe(201);
  });
}

describe.each(['local directory', 'S3'] as const)('POST /v1/f/:slug — files (%s)', (store) => {
  const files = useFileStore(store);

  storageCases(files);
  limitCases(files);
  spamAndAbortCases(files);
});

import { emptyTestDatabaseUrl, factories } from '@intake/shared/testing';
import { purgeDue } from '../services/management/src/lifecycle/purge';
import { startStack } from '../console/test/stack';

/**
 * The trash, over HTTP through the whole stack (ingest, management, workers): a deleted form or submission is hidden
 * from every read and post until restored, and gone for good TRASH_DAYS later, files included.
 */
jest.setTimeout(60_000);

let stack: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  // A database of its own: the purge it runs 31 days ahead would otherwise purge every other file's data (its spam,
  // its trash), at the pace of the shared database's size.
  stack = await startStack({ DATABASE_URL: await emptyTestDatabaseUrl('trash') });
});
afterAll(async () => {
  await stack?.close();
});

const DAY_MS = 86_400_000;

/** A team account (files allowed) with a form made through the API, and a client for its management key. */
async function accountWithForm() {
  const account = await factories.account(stack.platform.db, { plan: 'team' });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${account.managementKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const form = (await call('POST', '/v1/forms', { name: 'Contact' })).body as { id: string; slug: string };
  const post = async (fields: Record<string, string>, file?: string) => {
    const data = new FormData();
    for (const [k, v] of Object.entries(fields)) data.append(k, v);
    if (file) data.append('cv', new Blob([file], { type: 'text/plain' }), 'cv.txt');
    const res = await fetch(`${stack.url}/v1/f/${form.slug}`, {
      method: 'POST',
      headers: { accept: 'application/json' },
      body: data,
    });
    return { status: res.status, body: (await res.json()) as { id: string; type?: string } };
  };
  return { account, form, call, post };
}

const fileLink = async (call: Awaited<ReturnType<typeof accountWithForm>>['call'], submissionId: string) =>
  ((await call('GET', `/v1/submissions/${submissionId}`)).body as { attachments: { url: string }[] }).attachments[0]!
    .url;

describe('the trash: a form', () => {
  it('hides a deleted form, its posts, submissions and files until it is restored as it was', async () => {
    const { form, call, post } = await accountWithForm();
    const first = await post({ email: 'ada@example.com' }, 'a cv');
    expect(first.status).toBe(201);
    const link = await fileLink(call, first.body.id);
    expect((await fetch(link)).status).toBe(200);

    expect((await call('DELETE', `/v1/forms/${form.id}`)).status).toBe(204);
    expect((await call('GET', `/v1/forms/${form.id}`)).status).toBe(404);
    expect((await call('GET', '/v1/forms')).body.data).toEqual([]);
    const trash = (await call('GET', '/v1/forms?deleted=true')).body.data as { id: string; deleted_at: string }[];
    expect(trash).toEqual([expect.objectContaining({ id: form.id, deleted_at: expect.any(String) })]);
    expect((await post({ email: 'bob@example.com' })).body.type).toMatch(/form-not-found$/);
    expect((await call('GET', `/v1/submissions/${first.body.id}`)).status).toBe(404);
    expect((await call('GET', `/v1/forms/${form.id}/submissions`)).status).toBe(404);
    expect((await fetch(link)).status).toBe(404);
    // Its slug stays its own while it is in the trash.
    expect((await call('POST', '/v1/forms', { name: 'Again', slug: form.slug })).status).toBe(409);
    expect((await call('PATCH', `/v1/forms/${form.id}`, { name: 'x' })).status).toBe(404);

    const restored = await call('POST', `/v1/forms/${form.id}/restore`);
    expect([restored.status, restored.body.deleted_at, restored.body.name]).toEqual([200, null, 'Contact']);
    expect((await call('POST', `/v1/forms/${form.id}/restore`)).status).toBe(404);
    expect((await post({ email: 'carol@example.com' })).status).toBe(201);
    const listed = (await call('GET', `/v1/forms/${form.id}/submissions`)).body.data as { id: string }[];
    expect(listed).toHaveLength(2);
    expect((await fetch(link)).status).toBe(200);
    const audit = (await call('GET', '/v1/audit-log?limit=10')).body.data as { action: string }[];
    expect(audit.map((e) => e.action)).toEqual(expect.arrayContaining(['form.deleted', 'form.restored']));
  });

  it('deletes a form for good, files and all, when asked, or once its time in the trash is up', async () => {
    const { platform } = stack;
    const { form, call, post } = await accountWithForm();
    const posted = await post({ email: 'ada@example.com' }, 'a cv');
    const keys = await platform.db('submission_files').where({ submission_id: posted.body.id }).pluck('storage_key');
    expect(keys).toHaveLength(1);
    expect((await call('DELETE', `/v1/forms/${form.id}`)).status).toBe(204);
    const purge = (daysLater: number) =>
      purgeDue({ ...platform, clock: { now: () => new Date(Date.now() + daysLater * DAY_MS) }, trashDays: 30 });
    expect((await purge(29)).trash).toBe(0);
    expect(await platform.db('forms').where({ id: form.id }).first('id')).toBeDefined();
    expect((await purge(31)).trash).toBeGreaterThanOrEqual(1);
    expect(await platform.db('forms').where({ id: form.id }).first('id')).toBeUndefined();
    expect(await platform.db('submissions').where({ id: posted.body.id }).first('id')).toBeUndefined();
    await expect(platform.blobs.get(keys[0]!)).rejects.toThrow();

    const other = await accountWithForm();
    await other.post({ email: 'bob@example.com' });
    const now = await other.call('DELETE', `/v1/forms/${other.form.id}?permanently=true`);
    expect(now.status).toBe(204);
    expect(await platform.db('forms').where({ id: other.form.id }).first('id')).toBeUndefined();
    expect((await other.call('GET', '/v1/forms?deleted=true')).body.data).toEqual([]);
  });
});

describe('the trash: submissions', () => {
  it('hides a deleted submission from reads, lists and exports, restores it by id, and erases it with its person', async () => {
    const { account, form, call, post } = await accountWithForm();
    const kept = await post({ email: 'keep@example.com' });
    const gone = await post({ email: 'ada@example.com', message: 'trash me' }, 'a cv');
    const link = await fileLink(call, gone.body.id);
    expect((await call('DELETE', `/v1/submissions/${gone.body.id}`)).status).toBe(204);
    expect((await call('DELETE', `/v1/submissions/${gone.body.id}`)).status).toBe(404);
    expect((await call('GET', `/v1/submissions/${gone.body.id}`)).status).toBe(404);
    expect((await call('PATCH', `/v1/submissions/${gone.body.id}`, { status: 'spam' })).status).toBe(404);
    expect((await fetch(link)).status).toBe(404);
    const ids = async () =>
      ((await call('GET', `/v1/forms/${form.id}/submissions`)).body.data as { id: string }[]).map((s) => s.id);
    expect(await ids()).toEqual([kept.body.id]);
    const exported = await fetch(`${stack.url}/v1/forms/${form.id}/export.ndjson`, {
      headers: { authorization: `Bearer ${account.managementKey}` },
    });
    expect(exported.status).toBe(200);
    const lines = (await exported.text())
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(lines).toEqual([kept.body.id]);

    const restored = await call('POST', '/v1/submissions/restore', { ids: [gone.body.id, kept.body.id] });
    expect(restored.body).toEqual({ done: [gone.body.id], not_found: [kept.body.id] });
    expect((await ids()).sort()).toEqual([kept.body.id, gone.body.id].sort());
    expect((await fetch(link)).status).toBe(200);

    // An erasure takes what the trash holds too.
    expect((await call('DELETE', `/v1/submissions/${gone.body.id}`)).status).toBe(204);
    const erased = await call('DELETE', '/v1/data-subjects?email=ada@example.com');
    expect(erased.body).toEqual({ deleted: 1 });
    expect(await stack.platform.db('submissions').where({ id: gone.body.id }).first('id')).toBeUndefined();
  });
});

describe('the trash: its time is up', () => {
  it('deletes a submission, its file with it, TRASH_DAYS after it went to the trash, and nothing else', async () => {
    const { platform } = stack;
    const { call, post } = await accountWithForm();
    const kept = await post({ email: 'keep@example.com' });
    const gone = await post({ email: 'ada@example.com' }, 'a cv');
    const [key] = await platform.db('submission_files').where({ submission_id: gone.body.id }).pluck('storage_key');
    expect((await call('DELETE', `/v1/submissions/${gone.body.id}`)).status).toBe(204);
    const purged = await purgeDue({
      ...platform,
      clock: { now: () => new Date(Date.now() + 31 * DAY_MS) },
      trashDays: 30,
    });
    expect(purged.trash).toBeGreaterThanOrEqual(1);
    expect(await platform.db('submissions').where({ id: gone.body.id }).first('id')).toBeUndefined();
    await expect(platform.blobs.get(key as string)).rejects.toThrow();
    expect((await call('GET', `/v1/submissions/${kept.body.id}`)).status).toBe(200);
    expect((await call('POST', '/v1/submissions/restore', { ids: [gone.body.id] })).body.not_found).toEqual([
      gone.body.id,
    ]);
  });
  it('restores nothing past TRASH_DAYS, before the purge has reached it too', async () => {
    const { platform } = stack;
    const { form, call, post } = await accountWithForm();
    const recent = await post({ email: 'recent@example.com' });
    const old = await post({ email: 'old@example.com' });
    for (const id of [recent.body.id, old.body.id])
      expect((await call('DELETE', `/v1/submissions/${id}`)).status).toBe(204);
    // In the trash a day longer than TRASH_DAYS (30 here), and no purge has run since.
    const longAgo = new Date(Date.now() - 31 * DAY_MS);
    await platform.db('submissions').where({ id: old.body.id }).update({ deleted_at: longAgo });
    expect((await call('POST', '/v1/submissions/restore', { ids: [recent.body.id, old.body.id] })).body).toEqual({
      done: [recent.body.id],
      not_found: [old.body.id],
    });

    expect((await call('DELETE', `/v1/forms/${form.id}`)).status).toBe(204);
    await platform.db('forms').where({ id: form.id }).update({ deleted_at: longAgo });
    expect((await call('POST', `/v1/forms/${form.id}/restore`)).status).toBe(404);
    await platform.db('forms').where({ id: form.id }).update({ deleted_at: new Date() });
    expect((await call('POST', `/v1/forms/${form.id}/restore`)).status).toBe(200);
  });
});

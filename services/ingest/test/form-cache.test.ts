import { createTestPlatform, factories, type TestPlatform } from '@intake/shared/testing';
import { createFormCache } from '../src/read/form-cache';

const PERIOD = '2030-05-01';

describe('the ingest form cache', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await createTestPlatform();
  });
  afterAll(() => platform.close());

  async function liveForm() {
    const account = await factories.account(platform.db);
    return factories.form(platform.db, account.id);
  }
  const setStatus = (id: string, status: string) => platform.db('forms').where({ id }).update({ status });

  it('honours the time limit it was made with (each cache its own; 0 reads every time)', async () => {
    const form = await liveForm();
    const uncached = createFormCache({ db: platform.db, ttlMs: 0 });
    const cached = createFormCache({ db: platform.db, ttlMs: 60_000 });
    expect((await uncached.get(form.slug, PERIOD))?.status).toBe('live');
    expect((await cached.get(form.slug, PERIOD))?.status).toBe('live');
    await setStatus(form.id, 'paused');
    expect((await uncached.get(form.slug, PERIOD))?.status).toBe('paused');
    expect((await cached.get(form.slug, PERIOD))?.status).toBe('live');
  });

  it('drops a form’s copies on a notice, by id (an old slug too) and by slug', async () => {
    const form = await liveForm();
    const cache = createFormCache({ db: platform.db, ttlMs: 60_000 });
    expect((await cache.get(form.slug, PERIOD))?.status).toBe('live');
    await setStatus(form.id, 'paused');
    cache.forget({ form_id: 'frm_of_another_form', slug: 'another-slug' });
    expect((await cache.get(form.slug, PERIOD))?.status).toBe('live');
    cache.forget({ form_id: form.id });
    expect((await cache.get(form.slug, PERIOD))?.status).toBe('paused');
    await platform.db('forms').where({ id: form.id }).delete();
    cache.forget({ form_id: form.id });
    expect(await cache.get(form.slug, PERIOD)).toBeUndefined();
  });

  it('does not keep a copy read while a notice came (it may predate the change)', async () => {
    const form = await liveForm();
    const cache = createFormCache({ db: platform.db, ttlMs: 60_000 });
    const reading = cache.get(form.slug, PERIOD);
    cache.forget({ form_id: form.id, slug: form.slug });
    expect((await reading)?.status).toBe('live');
    await setStatus(form.id, 'paused');
    expect((await cache.get(form.slug, PERIOD))?.status).toBe('paused');
    cache.clear();
    await setStatus(form.id, 'draft');
    expect((await cache.get(form.slug, PERIOD))?.status).toBe('draft');
  });
});

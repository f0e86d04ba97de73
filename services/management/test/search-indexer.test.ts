import { eventually, useStarted } from '@intake/shared/testing';
import { drainSearchBacklog, startSearchIndexer } from '../src/submissions/search-indexer';
import { tombstoneSubmissions } from '../src/lifecycle/purge.repository';
import { ownerWithForm, startManagement } from './helpers';

const ctx = useStarted(() => startManagement());

const searchRowsOf = (formId: string) =>
  ctx.platform.db('submission_search').where({ form_id: formId }).orderBy('submission_id');
const backlogOf = (formId: string) => ctx.platform.db('search_backlog').where({ form_id: formId });

describe('the search indexer', () => {
  it('indexes every stored submission exactly once, however many indexers share the backlog', async () => {
    const owner = await ownerWithForm(ctx);
    const posted = [];
    for (let i = 0; i < 60; i++)
      posted.push(await owner.submit({ payload: { message: `note ${i}`, email: ` P${i}@Example.test` } }));
    // Stored is not yet indexed: every post waits in the backlog.
    expect(await backlogOf(owner.form.id)).toHaveLength(60);
    expect(await searchRowsOf(owner.form.id)).toEqual([]);

    const taken = await Promise.all([1, 2, 3].map(() => drainSearchBacklog(ctx.platform.db, 7)));
    expect(taken.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(60);

    const rows = await searchRowsOf(owner.form.id);
    expect(rows.map((r: { submission_id: string }) => r.submission_id)).toEqual(posted.map((p) => p.id).sort());
    for (const row of rows) {
      const i = posted.findIndex((p) => p.id === row.submission_id);
      expect(row).toMatchObject({ account_id: owner.account.id, emails: [`p${i}@example.test`] });
      expect(row.keys.length).toBeGreaterThan(5);
    }
    expect(await backlogOf(owner.form.id)).toEqual([]);
  });

  it('never keeps keys of a purged submission, whether the purge comes before, after or during indexing', async () => {
    const owner = await ownerWithForm(ctx);
    const { db } = ctx.platform;
    const purge = (id: string) => tombstoneSubmissions(db, { formId: owner.form.id, ids: [id], now: new Date() });
    const before = await owner.submit({ payload: { message: 'purged before' } });
    await purge(before.id);
    await drainSearchBacklog(db);
    const after = await owner.submit({ payload: { message: 'purged after' } });
    await drainSearchBacklog(db);
    expect((await searchRowsOf(owner.form.id)).map((r: { submission_id: string }) => r.submission_id)).toEqual([
      after.id,
    ]);
    await purge(after.id);
    for (let i = 0; i < 15; i++) {
      const racing = await owner.submit({ payload: { message: `purged while indexed ${i}` } });
      await Promise.all([purge(racing.id), drainSearchBacklog(db)]);
    }
    expect(await searchRowsOf(owner.form.id)).toEqual([]);
    expect(await backlogOf(owner.form.id)).toEqual([]);
  });

  it('merges each batch into the indexes before it commits, so no search reads a pending list', async () => {
    const owner = await ownerWithForm(ctx);
    for (let i = 0; i < 20; i++)
      await owner.submit({
        payload: { message: `pending words number ${i}, ${i * 7919}`, email: `q${i}@example.test` },
      });
    await drainSearchBacklog(ctx.platform.db, 8);
    // What a merge now would move: nothing is left waiting.
    const { rows } = await ctx.platform.db.raw(
      `SELECT gin_clean_pending_list('submission_search_keys_idx') AS keys,
              gin_clean_pending_list('submission_search_emails_idx') AS emails`,
    );
    expect(rows[0]).toEqual({ keys: 0, emails: 0 });
    expect(await searchRowsOf(owner.form.id)).toHaveLength(20);
  });

  it('running, indexes a new post within moments', async () => {
    const owner = await ownerWithForm(ctx);
    const indexer = startSearchIndexer({ ...ctx.platform, intervalMs: 50 });
    try {
      const posted = await owner.submit({ payload: { message: 'find me soon' } });
      await eventually(async () => (await searchRowsOf(owner.form.id)).length === 1, { timeoutMs: 5_000 });
      expect((await searchRowsOf(owner.form.id))[0]).toMatchObject({ submission_id: posted.id });
    } finally {
      await indexer.stop();
    }
  });
});

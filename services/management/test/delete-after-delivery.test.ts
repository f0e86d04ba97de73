import { existsSync } from 'node:fs';
import path from 'node:path';
import { eventually, useStarted } from '@intake/shared/testing';
import { purgeDue } from '../src/lifecycle/purge';
import { ownerWithForm, startManagementWithWorkers } from './helpers';
import { receiver } from '../../delivery/test/helpers';
import { drainSearchBacklog } from '../src/submissions/search-indexer';

/** A receiver that refuses (500) the submissions whose body says `refuse`, until healed. */
async function choosyReceiver() {
  let healed = false;
  const target = await receiver((req, _n, res) => {
    res.statusCode = !healed && req.body.includes('refuse') ? 500 : 200;
    res.end(res.statusCode === 200 ? 'thanks' : 'no');
  });
  return { ...target, heal: () => void (healed = true) };
}

describe('delete after delivery', () => {
  const ctx = useStarted(() => startManagementWithWorkers({ retryMs: 20, pollMs: 50 }));

  /** A form with delete_after_delivery on (set through the API), notification addresses and a webhook to `url`. */
  async function relayForm(url: string) {
    const owner = await ownerWithForm(ctx);
    const patched = await owner.call('PATCH', `/v1/forms/${owner.form.id}`, {
      delete_after_delivery: true,
      notify_emails: ['owner@example.test'],
    });
    expect(patched.body).toMatchObject({ delete_after_delivery: true, retention_days: null, spam_retention_days: 30 });
    expect((await owner.call('POST', `/v1/forms/${owner.form.id}/webhooks`, { url })).status).toBe(201);
    return owner;
  }

  const deliveryOf = (submissionId: string) =>
    ctx.platform.db('deliveries').where({ submission_id: submissionId }).first();
  const fileOf = (s: { files: { storage_key: string }[] }) =>
    path.join(ctx.platform.config.FILES_DIR, s.files[0]!.storage_key);

  it('keeps a tombstone of a delivered submission, and all of one whose delivery failed until a replay succeeds', async () => {
    const target = await choosyReceiver();
    const owner = await relayForm(target.url);
    const file = (content: string) => [{ content, filename: 'note.txt' }];
    const passed = await owner.submit({ payload: { message: 'pass it on' }, files: file('one') });
    const refused = await owner.submit({ payload: { message: 'refuse it' }, files: file('two') });
    await eventually(async () => (await deliveryOf(passed.id))?.status === 'succeeded', { timeoutMs: 15_000 });
    await eventually(async () => (await deliveryOf(refused.id))?.status === 'failed', { timeoutMs: 15_000 });
    await eventually(async () =>
      ['sent', 'skipped'].includes(
        (
          await ctx.platform
            .db('notifications')
            .where({ dedup_key: `submission:${passed.id}` })
            .first()
        )?.status,
      ),
    );

    await drainSearchBacklog(ctx.platform.db);
    const searchRows = () => ctx.platform.db('submission_search').whereIn('submission_id', [passed.id, refused.id]);
    expect(await searchRows()).toHaveLength(2);
    await purgeDue(ctx.platform);
    // A tombstone cannot be found by what it said: its search keys and address went with its payload.
    expect((await searchRows()).map((r: { submission_id: string }) => r.submission_id)).toEqual([refused.id]);
    expect((await owner.call('GET', `/v1/forms/${owner.form.id}/submissions?q=pass%20it`)).body.data).toEqual([]);

    const tombstone = await ctx.platform.db('submissions').where({ id: passed.id }).first();
    expect(tombstone).toMatchObject({ payload: {}, status: 'received', file_count: 0, ip: null });
    expect(tombstone.purged_at).toBeInstanceOf(Date);
    // The API says it is a tombstone, and when it became one.
    const shown = (await owner.call('GET', `/v1/submissions/${passed.id}`)).body;
    expect(shown).toMatchObject({ payload: {}, files: 0, purged_at: tombstone.purged_at.toISOString() });
    const listed = (await owner.call('GET', `/v1/forms/${owner.form.id}/submissions`)).body.data;
    expect(listed.find((r: { id: string }) => r.id === refused.id).purged_at).toBeNull();
    expect(existsSync(fileOf(passed))).toBe(false);
    expect(await ctx.platform.db('submission_files').where({ submission_id: passed.id })).toEqual([]);
    expect((await deliveryOf(passed.id)).data).toEqual({});
    const kept = await ctx.platform.db('submissions').where({ id: refused.id }).first();
    expect(kept).toMatchObject({ payload: { message: 'refuse it' }, file_count: 1, purged_at: null });
    expect(existsSync(fileOf(refused))).toBe(true);

    target.heal();
    const replay = await owner.call('POST', `/v1/deliveries/${(await deliveryOf(refused.id)).id}/replay`);
    expect(replay.status).toBeLessThan(300);
    await eventually(async () => (await deliveryOf(refused.id))?.status === 'succeeded', { timeoutMs: 15_000 });
    await purgeDue(ctx.platform);
    expect(await ctx.platform.db('submissions').where({ id: refused.id }).first()).toMatchObject({ payload: {} });
    expect(existsSync(fileOf(refused))).toBe(false);
    await target.close();
  });
});

import { useStarted } from '@intake/shared/testing';
import { accountWithForm, startIngest, submissionsOf } from './helpers';
import { localKeys } from './files';

describe('POST /v1/f/:slug — quota and idempotency under concurrency', () => {
  const h = useStarted(() => startIngest());

  it('with a quota of 5, twenty simultaneous posts (with files) create exactly 5 submissions and keep exactly their files', async () => {
    const { account, form, post } = await accountWithForm(h, { quota: 5 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const body = new FormData();
        body.append('n', String(i));
        body.append('f', new Blob([`file ${i}`]), `${i}.txt`);
        return post(body);
      }),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(15);
    expect(answers.filter((a) => a.status === 402).every((a) => a.body.limit === 5)).toBe(true);
    expect(await submissionsOf(h, form.id)).toHaveLength(5);
    expect((await h.platform.db('usage_counters').where({ account_id: account.id }).first()).used).toBe(5);
    expect(localKeys(h.platform.config.FILES_DIR, account.id)).toHaveLength(5);
  });

  it('twenty simultaneous posts with one Idempotency-Key create exactly one submission; the others get the replay answer', async () => {
    const { account, form, post } = await accountWithForm(h);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post({ n: String(i) }, { 'idempotency-key': 'same-key' })),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    const replays = answers.filter((a) => a.status === 200);
    expect(replays).toHaveLength(19);
    for (const r of replays)
      expect(r.body).toEqual({ id: created[0]?.body.id, status: 'received', idempotent_replay: true });
    expect(await submissionsOf(h, form.id)).toHaveLength(1);
    expect(await h.platform.db('outbox').whereRaw("payload->>'form_id' = ?", [form.id])).toHaveLength(1);
    // Only the post that won the claim was counted: the others were stored nowhere and counted nowhere.
    expect((await h.platform.db('usage_counters').where({ account_id: account.id }).first()).used).toBe(1);
  });
});

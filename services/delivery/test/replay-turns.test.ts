import { newId } from '@intake/shared/contracts';
import { useTestPlatform } from '@intake/shared/testing';
import { pumpReplays } from '../src';
import { insertDelivery } from '../src/send/record.repository';
import { formWithHook } from './helpers';

const platform = useTestPlatform();

/** An account with a webhook and `count` of its deliveries queued for replay, the first at `from`, a second apart. */
async function queuedReplays(count: number, from: Date) {
  const { accountId, formId, hook } = await formWithHook(platform, { url: 'http://127.0.0.1:9/hook' });
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const id = newId('delivery');
    await insertDelivery(platform.db, {
      id,
      account_id: accountId,
      webhook_id: hook.id,
      form_id: formId,
      submission_id: null,
      event_type: 'webhook.test',
      data: {},
      now: from,
    });
    ids.push(id);
  }
  for (const [i, id] of ids.entries())
    await platform
      .db('deliveries')
      .where({ id })
      .update({ status: 'failed', replay_queued_at: new Date(from.getTime() + i * 1000) });
  return ids;
}

const stillQueued = async (ids: string[]) =>
  Number((await platform.db('deliveries').whereIn('id', ids).whereNotNull('replay_queued_at').count('* as n'))[0]?.n);

describe('the replay pump', () => {
  it('takes queued replays in turns between accounts: a big replay never holds back a small one queued after it', async () => {
    // Replays other tests left queued in this database are pumped first (to this test's own streams).
    while ((await pumpReplays({ ...platform, limit: 100 })) > 0);
    const big = await queuedReplays(60, new Date(Date.now() - 3_600_000));
    const small = await queuedReplays(5, new Date());
    expect(await pumpReplays({ ...platform, limit: 20 })).toBe(20);
    expect(await stillQueued(small)).toBe(0);
    expect(await stillQueued(big)).toBe(60 - 15);
    // The rest of the big one follows, oldest first, nothing twice.
    let pumped = 0;
    for (
      let n = await pumpReplays({ ...platform, limit: 20 });
      n > 0;
      n = await pumpReplays({ ...platform, limit: 20 })
    )
      pumped += n;
    expect(pumped).toBe(45);
    expect(await stillQueued(big)).toBe(0);
  });
});

import { newId, type Queryable } from '@intake/shared';
import { factories, useTestPlatform } from '@intake/shared/testing';
import type { Knex } from 'knex';
import { insertDeliveriesOfSubmissions } from '../src/repositories/fan-out-batch.repository';

/**
 * Issue 15: the fan-out's statement did its work per batch by reading every delivery stored (the
 * planner answered its look-up of existing deliveries with a scan of the whole unique index), so
 * each batch grew slower as the delivery log grew. Its cost must be the batch's, not the table's.
 */
describe('creating the deliveries of a batch of submissions', () => {
  const platform = useTestPlatform();
  const BATCH = 20;

  /** `BATCH` received submissions of the form, stored in `trx`, as (webhook, submission) delivery rows to create. */
  async function batchOf(trx: Knex.Transaction, hook: { accountId: string; formId: string; webhookId: string }) {
    const ids = Array.from({ length: BATCH }, () => newId('submission'));
    await trx('submissions').insert(
      ids.map((id) => ({ id, account_id: hook.accountId, form_id: hook.formId, status: 'received', payload: '{}' })),
    );
    return ids.map((submissionId) => ({
      id: newId('delivery'),
      account_id: hook.accountId,
      webhook_id: hook.webhookId,
      form_id: hook.formId,
      submission_id: submissionId,
      data: { submission_id: submissionId },
    }));
  }

  /** The Postgres pages (shared buffers hit or read) the statement touches for `rows`: it is run under EXPLAIN ANALYZE. */
  async function pagesTouched(trx: Knex.Transaction, rows: Awaited<ReturnType<typeof batchOf>>): Promise<number> {
    let pages: number | undefined;
    const explaining = {
      async raw(sql: string, bindings: readonly Knex.RawBinding[]) {
        const { rows: plan } = await trx.raw(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, bindings);
        const top = plan[0]['QUERY PLAN'][0].Plan;
        pages = top['Shared Hit Blocks'] + top['Shared Read Blocks'];
        return { rows: [] };
      },
    } as unknown as Queryable;
    await insertDeliveriesOfSubmissions(explaining, rows);
    if (pages === undefined) throw new Error('the statement was not run');
    return pages;
  }

  it('touches a few pages per delivery however many deliveries are stored, and still finds the pending ones', async () => {
    const account = await factories.account(platform.db);
    const form = await factories.form(platform.db, account.id);
    const webhook = await factories.webhook(platform, { accountId: account.id, formId: form.id });
    const hook = { accountId: account.id, formId: form.id, webhookId: webhook.id };
    // Everything below is rolled back: the bulk rows never reach the other tests.
    const trx = await platform.db.transaction();
    try {
      // The delivery log of a busy form: 20,000 earlier submissions delivered.
      await trx.raw(
        `INSERT INTO deliveries (id, account_id, webhook_id, form_id, submission_id, event_type, data, status, attempt_count)
         SELECT 'whd_bulk' || n, ?, ?, ?, 'sub_bulk' || n, 'submission.created', '{"submission_id":"x"}', 'succeeded', 1
         FROM generate_series(1, 20000) AS n`,
        [account.id, webhook.id, form.id],
      );
      const first = await batchOf(trx, hook);
      const pages = await pagesTouched(trx, first);
      expect(await trx('deliveries').where({ webhook_id: webhook.id }).count({ n: '*' }).first()).toEqual({
        n: 20000 + BATCH,
      });
      // Per delivery: its row, its three index entries and the look-ups, each a few levels deep (about 16 here).
      // Before the fix, the statement read every delivery stored: over 100 pages per delivery here.
      expect(pages / BATCH).toBeLessThan(30);

      // A redelivered batch finds its deliveries still waiting for their first attempt.
      const again = await insertDeliveriesOfSubmissions(trx, first);
      expect(again.map((d) => d.id).sort()).toEqual(first.map((d) => d.id).sort());
    } finally {
      await trx.rollback();
    }
  });
});

import { withPooledConnection } from '@intake/shared/base';
import { newId } from '@intake/shared/contracts';
import { factories, useTestPlatform } from '@intake/shared/testing';
import { INSERT_DELIVERIES, insertDeliveriesOfSubmissions } from '../src/repositories/fan-out-batch.repository';

const platform = useTestPlatform();
const BATCH = 20;

async function webhookOfNewForm() {
  const account = await factories.account(platform.db);
  const form = await factories.form(platform.db, account.id);
  const webhook = await factories.webhook(platform, { accountId: account.id, formId: form.id });
  return { accountId: account.id, formId: form.id, webhookId: webhook.id };
}

/** The delivery rows of `submissionIds` for the webhook, as the fan-out builds them. */
function deliveriesOf(hook: Awaited<ReturnType<typeof webhookOfNewForm>>, submissionIds: string[]) {
  return submissionIds.map((submissionId) => ({
    id: newId('delivery'),
    account_id: hook.accountId,
    webhook_id: hook.webhookId,
    form_id: hook.formId,
    submission_id: submissionId,
    data: { submission_id: submissionId },
  }));
}

/**
 * The fan-out's statement must cost what its batch costs, not what the delivery log holds: a
 * planner answering its look-up of existing deliveries with a scan of the whole unique index would
 * make each batch slower as the log grows.
 */
describe('creating the deliveries of a batch of submissions', () => {
  it('touches a few pages of deliveries per delivery however many are stored, whichever join the planner picks', async () => {
    const hook = await webhookOfNewForm();
    // One connection, one transaction, rolled back: the bulk rows never reach the other tests.
    const pages = await withPooledConnection(platform.db, async (connection) => {
      await connection.query('BEGIN');
      try {
        // The delivery log of a busy form: 10,000 earlier submissions delivered, each delivery
        // created waiting, leased for its attempt, then recorded (as the send consumer does).
        await connection.query(
          `INSERT INTO deliveries (id, account_id, webhook_id, form_id, submission_id, event_type, data)
           SELECT 'whd_bulk' || n, $1, $2, $3, 'sub_bulk' || n, 'submission.created', '{}'
           FROM generate_series(1, 10000) AS n`,
          [hook.accountId, hook.webhookId, hook.formId],
        );
        await connection.query('UPDATE deliveries SET lease_until = now() WHERE webhook_id = $1', [hook.webhookId]);
        await connection.query(
          "UPDATE deliveries SET status = 'succeeded', attempt_count = 1, lease_until = NULL WHERE webhook_id = $1",
          [hook.webhookId],
        );
        /** Pages of `deliveries` and its indexes this transaction has read or written so far. */
        const pagesOfDeliveries = async (): Promise<number> =>
          Number(
            (
              await connection.query(
                `SELECT sum(pg_stat_get_xact_blocks_fetched(oid)) AS n FROM pg_class WHERE oid = 'deliveries'::regclass
                 OR oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'deliveries'::regclass)`,
              )
            ).rows[0].n,
          );
        // Which join the planner picks depends on its statistics (a table never analysed, a
        // skewed status column): the statement is measured as planned, then with nested loops
        // made to look expensive, as they do to a planner that expects many rows.
        const measured: number[] = [];
        for (const nestedLoops of [true, false]) {
          if (!nestedLoops) await connection.query('SET LOCAL enable_nestloop = off');
          const ids = Array.from({ length: BATCH }, () => newId('submission'));
          await connection.query(
            `INSERT INTO submissions (id, account_id, form_id, status, payload)
             SELECT id, $1, $2, 'received', '{}' FROM unnest($3::text[]) AS id`,
            [hook.accountId, hook.formId, ids],
          );
          const before = await pagesOfDeliveries();
          await connection.query(INSERT_DELIVERIES.text, [JSON.stringify(deliveriesOf(hook, ids))]);
          measured.push((await pagesOfDeliveries()) - before);
        }
        const { count } = (
          await connection.query('SELECT count(*)::int AS count FROM deliveries WHERE webhook_id = $1', [
            hook.webhookId,
          ])
        ).rows[0];
        expect(count).toBe(10000 + 2 * BATCH); // the statement created both batches
        return measured;
      } finally {
        await connection.query('ROLLBACK');
        // The rolled-back rows stay in the tables as dead versions until a vacuum (this machine
        // runs Postgres without autovacuum): every later test of this database would scan them.
        await connection.query('VACUUM deliveries, submissions');
      }
    });
    // Per delivery: its row and its three index entries, found and written a few levels deep (about
    // 14 pages here). Before the fix, a hash join read every delivery stored, live and dead: hundreds of
    // pages per delivery here, more as the table grows.
    for (const read of pages) expect(read / BATCH).toBeLessThan(30);
  });

  it('returns the deliveries still waiting for their first attempt when a batch comes again', async () => {
    const hook = await webhookOfNewForm();
    const ids = Array.from({ length: 3 }, () => newId('submission'));
    await platform
      .db('submissions')
      .insert(
        ids.map((id) => ({ id, account_id: hook.accountId, form_id: hook.formId, status: 'received', payload: '{}' })),
      );
    const rows = deliveriesOf(hook, ids);
    const created = await insertDeliveriesOfSubmissions(platform.db, rows);
    expect(created.map((d) => d.id).sort()).toEqual(rows.map((r) => r.id).sort());
    // One of them has had its attempt: a redelivered batch creates nothing and finds the two others.
    await platform.db('deliveries').where({ id: rows[0]!.id }).update({ status: 'succeeded', attempt_count: 1 });
    const again = await insertDeliveriesOfSubmissions(platform.db, deliveriesOf(hook, ids));
    expect(again.map((d) => d.id).sort()).toEqual([rows[1]!.id, rows[2]!.id].sort());
    expect(await platform.db('deliveries').where({ webhook_id: hook.webhookId }).count({ n: '*' }).first()).toEqual({
      n: 3,
    });
  });
});

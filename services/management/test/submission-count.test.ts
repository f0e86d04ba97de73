import { useStarted } from '@intake/shared/testing';
import { EXACT_COUNT_UP_TO } from '../src/submissions/submission.repository';
import { ownerWithForm as ownerWithFormOf, startManagement } from './helpers';

const ctx = useStarted(() => startManagement());
const ownerWithForm = () => ownerWithFormOf(ctx);

/** Writes `rows` received submissions of the form in one statement (the list's total is what is tested, not ingest). */
async function bulkSubmissions(accountId: string, formId: string, rows: number) {
  await ctx.platform.db.raw(
    `INSERT INTO submissions (id, account_id, form_id, status, payload, received_at)
     SELECT 'sub_' || substr(md5(:formId || g), 1, 26), :accountId, :formId, 'received',
            json_build_object('message', 'Bulk ' || g), now() - g * interval '1 minute'
     FROM generate_series(1, :rows::int) g`,
    { accountId, formId, rows },
  );
  await ctx.platform.db.raw('ANALYZE submissions');
}

describe('the total of a filter', () => {
  it('is exact up to 10,000 and the planner’s estimate beyond, flagged `total_is_estimate`', async () => {
    const { account, form, call, submit } = await ownerWithForm();
    await submit({ payload: { message: 'the needle' } });
    await submit({ payload: { message: 'hay' } });
    const list = `/v1/forms/${form.id}/submissions?total=true`;
    const small = await call('GET', list);
    expect(small.body).toMatchObject({ total: 2, total_is_estimate: false });

    const rows = 2 * EXACT_COUNT_UP_TO;
    // Another account's form as large: the estimate must not take account and form for independent (it would halve).
    const other = await ownerWithForm();
    await bulkSubmissions(other.account.id, other.form.id, rows);
    await bulkSubmissions(account.id, form.id, rows);
    const large = await call('GET', list);
    expect(large.status).toBe(200);
    expect(large.body.total_is_estimate).toBe(true);
    // The planner's figure: never at or below the bound it stands for, and near the truth after ANALYZE.
    expect(large.body.total).toBeGreaterThan(EXACT_COUNT_UP_TO);
    expect(large.body.total).toBeGreaterThan(rows * 0.75);
    expect(large.body.total).toBeLessThan(rows * 1.5);
    expect(large.body.data).toHaveLength(25);

    // A filter that matches few of them is counted exactly, however large the form.
    const needle = await call('GET', `${list}&q=needle`);
    expect(needle.body).toMatchObject({ total: 1, total_is_estimate: false });
    // Without `total=true` neither is answered.
    const plain = await call('GET', `/v1/forms/${form.id}/submissions`);
    expect(plain.body).not.toHaveProperty('total');
    expect(plain.body).not.toHaveProperty('total_is_estimate');
  });
});

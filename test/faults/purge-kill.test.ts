import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { newId } from '@intake/shared/contracts';
import { eventually, factories, type TestPlatform } from '@intake/shared/testing';
import { faultSuite, filesUnder, processEnv, startService } from './harness';

/**
 * Expired submissions, each with a file: enough that the purge takes several seconds (15 batches of 200, each followed
 * by a pause nine times its length at a duty of 0.1), so the kill lands mid-run.
 */
const EXPIRED = 3000;

/** A form keeping submissions one day, with EXPIRED submissions of two days ago written in bulk (rows and files). */
async function expiredForm(platform: TestPlatform) {
  const { db, config } = platform;
  const account = await factories.account(db);
  const form = await factories.form(db, account.id);
  await db('forms').where({ id: form.id }).update({ retention_days: 1 });
  const rows = Array.from({ length: EXPIRED }, () => ({ s: newId('submission'), f: newId('file') }));
  const bindings = { account: account.id, form: form.id, rows: JSON.stringify(rows) };
  await db.raw(
    `INSERT INTO submissions (id, account_id, form_id, status, payload, file_count, received_at)
     SELECT s, :account, :form, 'received', '{"message":"old"}', 1, now() - interval '2 days'
     FROM json_to_recordset(:rows::json) AS r(s text, f text)`,
    bindings,
  );
  await db.raw(
    `INSERT INTO submission_files (id, submission_id, account_id, field, filename, content_type, size, storage_key)
     SELECT f, s, :account, 'file', 'a.txt', 'text/plain', 3, concat_ws('/', :account::text, :form::text, s, f)
     FROM json_to_recordset(:rows::json) AS r(s text, f text)`,
    bindings,
  );
  const formDir = path.join(config.FILES_DIR, account.id, form.id);
  for (const r of rows) {
    mkdirSync(path.join(formDir, r.s), { recursive: true });
    writeFileSync(path.join(formDir, r.s, r.f), 'old');
  }
  const left = async () =>
    Number((await db('submissions').where({ form_id: form.id }).count({ n: '*' }).first())?.n ?? 0);
  /** What the audit log says the purge removed of this account, over all its entries. */
  const audited = async () => {
    const entries = await db('audit_log').where({ account_id: account.id, action: 'submissions.purged' });
    return entries.reduce((sum, e) => sum + Number(e.details.retention), 0);
  };
  return { formDir, left, audited };
}

/** The purge runs in the management process at start; SIGKILLed halfway, the next process finishes it. */
describe('fault: management process killed in the middle of a purge', () => {
  const suite = faultSuite();

  it('resumes after a restart: every expired submission and every file goes, none is orphaned, all audited', async () => {
    const { platform, processes } = suite;
    const { formDir, left, audited } = await expiredForm(platform);
    expect(filesUnder(formDir)).toHaveLength(EXPIRED);
    const env = processEnv(platform.config, { PURGE_INTERVAL_SECONDS: '3600' });

    const first = await startService('management', env);
    processes.push(first);
    await eventually(async () => (await left()) < EXPIRED, { timeoutMs: 60_000, intervalMs: 5 });
    await first.stop('SIGKILL');
    const atKill = await left();
    expect(atKill).toBeGreaterThan(0);
    // Rows whose files went before the kill stay until the next run: no file is left without its row.
    expect(filesUnder(formDir).length).toBeLessThanOrEqual(atKill);

    const second = await startService('management', env);
    processes.push(second);
    await eventually(async () => (await left()) === 0, { timeoutMs: 120_000, intervalMs: 100 });
    expect(filesUnder(formDir)).toEqual([]);
    // What the killed run removed is in the audit log too: the entries add up to every expired submission.
    await eventually(async () => (await audited()) === EXPIRED, { timeoutMs: 30_000 });
  }, 180_000);
});

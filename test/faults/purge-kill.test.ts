import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { newId } from '@intake/shared';
import { eventually, factories, type TestPlatform } from '@intake/shared/testing';
import { faultSuite, filesUnder, processEnv, startService } from './harness';

/** Expired submissions, each with a file: enough that the purge takes a few seconds in batches of 500. */
const EXPIRED = 6000;

/** A form keeping submissions one day, with EXPIRED submissions of two days ago written in bulk (rows and files). */
async function expiredForm(platform: TestPlatform) {
  const { db, config } = platform;
  const account = await factories.account(db);
  const form = await factories.form(db, account.id);
  await db('forms').where({ id: form.id }).update({ retention_days: 1 });
  const receivedAt = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000);
  const rows = Array.from({ length: EXPIRED }, () => ({ id: newId('submission'), file: newId('file') }));
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000);
    await db('submissions').insert(
      chunk.map((r) => ({
        id: r.id,
        account_id: account.id,
        form_id: form.id,
        status: 'received',
        payload: JSON.stringify({ message: 'old' }),
        file_count: 1,
        received_at: receivedAt,
      })),
    );
    await db('submission_files').insert(
      chunk.map((r) => ({
        id: r.file,
        submission_id: r.id,
        account_id: account.id,
        field: 'file',
        filename: 'a.txt',
        content_type: 'text/plain',
        size: 3,
        storage_key: `${account.id}/${form.id}/${r.id}/${r.file}`,
      })),
    );
  }
  const formDir = path.join(config.FILES_DIR, account.id, form.id);
  for (const r of rows) {
    mkdirSync(path.join(formDir, r.id), { recursive: true });
    writeFileSync(path.join(formDir, r.id, r.file), 'old');
  }
  const left = async () =>
    Number((await db('submissions').where({ form_id: form.id }).count({ n: '*' }).first())?.n ?? 0);
  return { formDir, left };
}

/** The purge runs in the management process at start; SIGKILLed halfway, the next process finishes it. */
describe('fault: management process killed in the middle of a purge', () => {
  const suite = faultSuite();

  it('resumes after a restart: every expired submission and every file goes, none is orphaned', async () => {
    const { platform, processes } = suite;
    const { formDir, left } = await expiredForm(platform);
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
  }, 180_000);
});

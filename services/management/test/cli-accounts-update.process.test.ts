import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { factories, testDatabaseUrl, useTestPlatform } from '@intake/shared/testing';
import { runAdmin } from '../src/cli/admin';

const run = promisify(execFile);
const repo = path.resolve(__dirname, '../../..');
const env = { ...process.env, DATABASE_URL: testDatabaseUrl(), LOG_LEVEL: 'silent' };

describe('operator CLI: accounts update --email (the address that receives quota warnings)', () => {
  const platform = useTestPlatform();

  it('sets the contact address and prints exactly one JSON object', async () => {
    const account = await factories.account(platform.db, { plan: 'team' });
    const { stdout } = await run(
      'npm',
      ['run', '--silent', 'admin', '--', 'accounts', 'update', account.id, '--email', 'owner@example.test'],
      { cwd: repo, env },
    );
    expect(stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(stdout)).toEqual({
      account_id: account.id,
      name: 'Test account',
      plan: 'team',
      quota: 100_000,
      contact_email: 'owner@example.test',
    });
    expect(await platform.db('accounts').where({ id: account.id }).first('contact_email')).toEqual({
      contact_email: 'owner@example.test',
    });
  });

  it('clears it with --email ""', async () => {
    const account = await factories.account(platform.db, { contactEmail: 'old@example.test' });
    expect(await runAdmin(['accounts', 'update', account.id, '--email', ''], env)).toMatchObject({
      code: 0,
      stdout: { contact_email: null },
    });
    expect(await platform.db('accounts').where({ id: account.id }).first('contact_email')).toEqual({
      contact_email: null,
    });
  });

  it('fails with exit 1 and a message on stderr for an unknown account', async () => {
    expect(await runAdmin(['accounts', 'update', 'acc_nope', '--email', 'a@b.test'], env)).toEqual({
      code: 1,
      stderr: 'No account acc_nope',
    });
  });

  it.each([
    [['accounts', 'update', '--email', 'a@b.test']],
    [['accounts', 'update', 'acc_1']],
    [['accounts', 'update', 'acc_1', 'acc_2', '--email', 'a@b.test']],
    [['accounts', 'update', 'acc_1', '--email', 'not-an-address']],
    [['accounts', 'update', 'acc_1', '--email', 'a@b.test', '--plan', 'pro']],
  ])('refuses %j with exit 2, a usage message and nothing on stdout', async (args) => {
    const result = await runAdmin(args, env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBeUndefined();
    expect(result.stderr).toMatch(/Usage|--email|Unknown option/);
  });
});

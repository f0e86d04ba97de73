import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createDb } from '@intake/shared/base';
import { newId } from '@intake/shared/contracts';
import { buildServiceApp } from '@intake/shared/runtime';
import {
  createTestPlatform,
  freePort,
  listen,
  migratedTestDatabase,
  testDatabaseUrl,
  type TestPlatform,
} from '@intake/shared/testing';
import { managementService, runAdmin } from '../src';
import { exitCodeFor, NEWER_SCHEMA_EXIT_CODE, runMigrations } from '../src/cli/migrate';
import { api } from './helpers';

const run = promisify(execFile);
const repo = path.resolve(__dirname, '../../..');

async function admin(args: string[]) {
  return run('npm', ['run', '--silent', 'admin', '--', ...args], {
    cwd: repo,
    env: { ...process.env, DATABASE_URL: testDatabaseUrl(), LOG_LEVEL: 'silent' },
  }).then(
    (r) => ({ code: 0, ...r }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      stdout: err.stdout,
      stderr: err.stderr,
    }),
  );
}

describe('operator CLI', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    await migratedTestDatabase();
    platform = await createTestPlatform();
  });
  afterAll(() => platform.close());

  it('fails the migrations Job fast, naming NATS_URL, when NATS does not answer', async () => {
    const port = await freePort();
    const env = { DATABASE_URL: testDatabaseUrl(), NATS_URL: `nats://127.0.0.1:${port}` };
    await expect(runMigrations(env, { natsWaitMs: 500 })).rejects.toThrow(
      `NATS did not answer within 0.5 s at NATS_URL (nats://127.0.0.1:${port})`,
    );
  });

  it('clears a stale migration lock with migrate --unlock, and nothing else', async () => {
    const env = { DATABASE_URL: testDatabaseUrl() };
    await platform.db('knex_migrations_lock').update({ is_locked: 1 });
    expect(await runAdmin(['migrate', '--unlock'], env)).toEqual({ code: 0, stdout: { unlocked: true } });
    expect(await platform.db('knex_migrations_lock').first('is_locked')).toEqual({ is_locked: 0 });
    expect(await runAdmin(['migrate', '--unlock'], env)).toEqual({ code: 0, stdout: { unlocked: false } });
    expect((await runAdmin(['migrate'], env)).code).toBe(2);
  });

  it('creates an account and prints exactly one JSON object whose management key works', async () => {
    const { code, stdout } = await admin(['accounts', 'create', '--plan', 'pro', '--name', 'Acme', '--quota', '5']);
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toHaveLength(1);
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({
      account_id: expect.stringMatching(/^acc_/),
      management_key: expect.stringMatching(/^svc_mgmt_/),
      plan: 'pro',
      quota: 5,
      name: 'Acme',
    });
    const account = await platform.db('accounts').where({ id: out.account_id }).first();
    expect(account).toMatchObject({ plan_id: 'pro', quota_override: 5, name: 'Acme' });

    const server = await listen(buildServiceApp(managementService, platform).callback());
    try {
      const call = api(server.url, out.management_key);
      const minted = await call('POST', '/v1/api-keys', { type: 'submission' });
      expect(minted.status).toBe(201);
      expect((await call('GET', '/v1/api-keys')).body.data).toHaveLength(2);
      expect((await call('DELETE', `/v1/api-keys/${minted.body.id}`)).status).toBe(204);
    } finally {
      await server.close();
    }
  });

  it('uses the plan’s quota when --quota is not given', async () => {
    const { stdout } = await admin(['accounts', 'create', '--plan', 'free']);
    expect(JSON.parse(stdout)).toMatchObject({ plan: 'free', quota: 100 });
  });

  it.each([
    [['accounts', 'create']],
    [['accounts', 'create', '--plan', 'gold']],
    [['accounts', 'create', '--plan', 'pro', '--quota', '-3']],
    [['accounts', 'create', '--plan', 'pro', '--bogus']],
    [['accounts', 'delete']],
  ])(
    'refuses %j with a usage message on stderr and nothing on stdout',
    async (args) => {
      const { code, stdout, stderr } = await admin(args);
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toMatch(/Usage|--plan|--quota|Unknown option/);
    },
    60_000,
  );

  it('takes any quota a Postgres integer holds, and names the limit when refusing one', async () => {
    const env = { ...process.env, DATABASE_URL: testDatabaseUrl(), LOG_LEVEL: 'silent' };
    const created = await runAdmin(['accounts', 'create', '--plan', 'pro', '--quota', '2147483647'], env);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatchObject({ quota: 2147483647 });
    for (const quota of ['2147483648', '9999999999', '12345678901', '1.5', '1e3']) {
      const refused = await runAdmin(['accounts', 'create', '--plan', 'pro', '--quota', quota], env);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('from 0 to 2147483647');
    }
  });
});

describe('operator CLI: members add', () => {
  const db = createDb(testDatabaseUrl());
  beforeAll(() => migratedTestDatabase());
  afterAll(() => db.destroy());

  it('refuses an account that does not exist: exit 1, the account named, no one invited', async () => {
    const env = { ...process.env, DATABASE_URL: testDatabaseUrl(), LOG_LEVEL: 'silent' };
    const missing = newId('account', Date.now());
    const args = ['members', 'add', '--account', missing, '--email', 'nobody@example.test', '--role', 'owner'];
    expect(await runAdmin(args, env)).toEqual({ code: 1, stderr: `No account ${missing}` });
    expect(await db('members').where({ account_id: missing }).first('id')).toBeUndefined();
  });
});

describe('the migrations Job before a rollback', () => {
  const db = createDb(testDatabaseUrl());
  beforeAll(() => migratedTestDatabase());
  afterAll(() => db.destroy());

  it('refuses a database a newer release migrated, with the exit code the chart’s Job does not retry', async () => {
    // What the migrate Job of an older revision meets before `helm rollback` to it: the rollback stops there.
    const newer = { name: '999-from-a-newer-release', batch: 99, migration_time: new Date() };
    await db('knex_migrations').insert(newer);
    try {
      const failure = runMigrations({ DATABASE_URL: testDatabaseUrl() }).catch((err: unknown) => err);
      const err = await failure;
      expect((err as Error).message).toMatch(/999-from-a-newer-release.*Roll forward/);
      expect(exitCodeFor(err)).toBe(NEWER_SCHEMA_EXIT_CODE);
    } finally {
      await db('knex_migrations').where({ name: newer.name }).delete();
    }
    expect(exitCodeFor(new Error('NATS did not answer'))).toBe(1);
  });
});

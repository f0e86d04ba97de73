import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { spawn } from 'node:child_process';
import { eventually, factories } from '../../testing/support';
import { createDb, ensureDatabase, type Db } from '../../base/db';
import { DEFAULT_SPAM_RULES } from '../../contracts/spam';
import {
  migrate,
  MigrationLockBusyError,
  unlockMigrations,
  UnknownMigrationsError,
  type MigrationLockHolder,
} from '../migrate';
import { migrations } from './index';

/** Marks the indexes INVALID (what a CONCURRENTLY build killed mid-way leaves), runs the migration again: all valid. */
async function expectInvalidIndexesRebuilt(db: Db, name: string, indexes: string[]): Promise<void> {
  const migration = migrations.find((m) => m.name === name);
  if (!migration) throw new Error(`${name} is missing`);
  const validity = async (): Promise<boolean[]> =>
    Promise.all(
      indexes.map(async (index) => {
        const { rows } = await db.raw<{ rows: { valid: boolean }[] }>(
          'SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass(?)',
          [index],
        );
        return rows[0]?.valid ?? false;
      }),
    );
  await db.raw(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = ANY(?::regclass[])`, [indexes]);
  expect(await validity()).toEqual(indexes.map(() => false));
  await migration.up(db);
  expect(await validity()).toEqual(indexes.map(() => true));
}

/** A migrated database of the file's own (dropped afterwards): these tests rewrite its migration history. */
const name = `intake_migrations_${randomBytes(4).toString('hex')}`;
const url = `postgres://postgres@127.0.0.1:5432/${name}`;
let db: Db;
beforeAll(async () => {
  await ensureDatabase(url);
  db = createDb(url, { poolMax: 2 });
  await migrate(db);
});
afterAll(async () => {
  await db.destroy();
  const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.end();
});

describe('migrate', () => {
  it('runs every migration once, in order, and nothing on a second start', async () => {
    expect(await db('knex_migrations').orderBy('id').pluck('name')).toEqual(migrations.map((m) => m.name));
    await migrate(db);
    expect(await db('knex_migrations').orderBy('id').pluck('name')).toEqual(migrations.map((m) => m.name));
  });

  it('refuses any unknown history with a message that says what to do', async () => {
    await db('knex_migrations').delete();
    const unknown = ['001-initial', '040-usage-indexes', '090-json-field-order'];
    await db('knex_migrations').insert(unknown.map((n) => ({ name: n, batch: 1, migration_time: new Date() })));
    const failure = migrate(db);
    await expect(failure).rejects.toBeInstanceOf(UnknownMigrationsError);
    await expect(failure).rejects.toThrow(
      /001-initial, 040-usage-indexes, 090-json-field-order.*Roll forward.*restore a backup/,
    );
    await expect(failure).rejects.not.toThrow(/drop/i);
    await db('knex_migrations').delete();
    await db('knex_migrations').insert(migrations.map((m) => ({ name: m.name, batch: 1, migration_time: new Date() })));
  });

  it('builds again an index that a killed CONCURRENTLY build left INVALID (035)', async () => {
    await expectInvalidIndexesRebuilt(db, '035-dashboard', ['submissions_unread_idx', 'usage_daily_day_idx']);
  });

  it('clears the lock a migrator killed mid-run left, and waits for one that still runs', async () => {
    // A migrator as far as knex's lock: it holds the advisory lock and has set knex's lock row, then is killed.
    const script = `const pg = require('pg');
      const c = new pg.Client(${JSON.stringify(url)});
      c.connect()
        .then(() => c.query('SELECT pg_advisory_lock(7305218106)'))
        .then(() => c.query('UPDATE knex_migrations_lock SET is_locked = 1'))
        .then(() => process.stdout.write('locked'));
      setInterval(() => undefined, 1000);`;
    const child = spawn(process.execPath, ['-e', script], { cwd: __dirname, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      // While it runs, another migrator waits for it (it does not fail, nor clear the lock under it), and is told who.
      const told: (MigrationLockHolder | undefined)[] = [];
      const waiting = migrate(db, { onLockWait: (holder) => told.push(holder) });
      await eventually(() => told.length > 0);
      const { rows } = await db.raw(
        `SELECT a.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid)
          WHERE a.datname = ? AND l.locktype = 'advisory' AND l.granted`,
        [name],
      );
      expect(told[0]?.pid).toBe(rows[0].pid);
      // One that may wait less gives up after its wait, naming the holder.
      const impatient = migrate(db, { lockWaitMs: 1500 });
      await expect(impatient).rejects.toBeInstanceOf(MigrationLockBusyError);
      await expect(impatient).rejects.toThrow(`Postgres pid ${rows[0].pid}`);
      expect(await db('knex_migrations_lock').first('is_locked')).toEqual({ is_locked: 1 });
      child.kill('SIGKILL');
      expect(await waiting).toEqual({ clearedStaleLock: true });
      expect(await db('knex_migrations_lock').first('is_locked')).toEqual({ is_locked: 0 });
      expect(await db('knex_migrations').orderBy('id').pluck('name')).toEqual(migrations.map((m) => m.name));
      // What `admin migrate --unlock` does, with nothing left to clear.
      expect(await unlockMigrations(db)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('the migrations’ own changes', () => {
  it('040 marks as a form’s own each inheritable setting a form made before had changed from its default', async () => {
    const migration = migrations.find((m) => m.name === '040-form-defaults');
    if (!migration) throw new Error('040-form-defaults is missing');
    await migration.down(db);
    const account = await factories.account(db);
    const untouched = await factories.form(db, account.id);
    // Its spam settings as forms were made before 041's defaults.
    await db('forms').where({ id: untouched.id }).update({ spam_filter: 'shadow', spam_rules: '{}' });
    const setUp = await factories.form(db, account.id, { notify_emails: ['owner@example.com'] });
    await db('forms')
      .where({ id: setUp.id })
      .update({
        spam_rules: JSON.stringify({ max_links: 2 }),
        spam_retention_days: null,
        pages: JSON.stringify({ thank_you: { title: 'Thanks' } }),
        spam_filter: 'shadow',
      });
    await migration.up(db);
    const overridden = async (id: string) => (await db('forms').where({ id }).first('overridden')).overridden;
    expect(await overridden(untouched.id)).toEqual([]);
    expect(await overridden(setUp.id)).toEqual(['notify_emails', 'pages', 'spam_rules', 'spam_retention_days']);
    expect((await db('projects').where({ account_id: account.id }).first('form_defaults')).form_defaults).toEqual({});
  });
  it('041 makes new forms start on with the certain rules, and leaves the forms made before as they were', async () => {
    const migration = migrations.find((m) => m.name === '041-spam-defaults');
    if (!migration) throw new Error('041-spam-defaults is missing');
    await migration.down(db);
    const account = await factories.account(db);
    const before = await factories.form(db, account.id);
    await migration.up(db);
    const after = await factories.form(db, account.id);
    const spam = async (id: string) => db('forms').where({ id }).first('spam_filter', 'spam_rules');
    expect(await spam(before.id)).toEqual({ spam_filter: 'shadow', spam_rules: {} });
    expect(await spam(after.id)).toEqual({ spam_filter: 'on', spam_rules: DEFAULT_SPAM_RULES });
  });
  it('043 folds accents in search and sends back to the backlog the indexed submissions that are not all ASCII', async () => {
    const migration = migrations.find((m) => m.name === '043-search-accents');
    if (!migration) throw new Error('043-search-accents is missing');
    await migration.down(db);
    const account = await factories.account(db);
    const form = await factories.form(db, account.id);
    const store = (name: string) =>
      factories.submission({ db }, { accountId: account.id, formId: form.id, payload: { name } });
    const plain = await store('Muller');
    const accented = await store('Müller');
    // Indexed as the indexer indexes (management's search.repository.ts), with the keys before 043.
    await db.raw(
      `INSERT INTO submission_search (submission_id, account_id, form_id, bucket, keys, emails)
       SELECT id, account_id, form_id, intake_search_bucket(received_at), intake_search_keys(form_id, received_at, payload),
              '{}' FROM submissions WHERE form_id = ?`,
      [form.id],
    );
    await db('search_backlog').where({ form_id: form.id }).delete();
    await migration.up(db);
    expect(await db('search_backlog').where({ form_id: form.id }).pluck('submission_id')).toEqual([accented.id]);
    expect(await db('submission_search').where({ form_id: form.id }).pluck('submission_id')).toEqual([plain.id]);
    const { rows } = await db.raw<{ rows: unknown[] }>(
      'SELECT intake_search_document(?::json) AS document, intake_search_pattern(?) AS pattern, intake_search_terms(?) AS terms',
      [JSON.stringify({ name: 'Zoë Müller', street: 'Hauptstraße', city: 'Søborg' }), 'MÜLLER_％', 'Zoë'],
    );
    expect(rows[0]).toEqual({
      document: 'zoe muller\nhauptstrasse\nsoborg',
      pattern: '%muller\\_\\%%',
      terms: expect.arrayContaining(['zoe']),
    });
  });
});

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDb, ensureDatabase, migrate, UnknownMigrationsError, type Db } from '../db';
import { FOLDED_MIGRATIONS, migrations, PRE_RELEASE_MIGRATIONS } from './index';

/** A database of its own (dropped afterwards): these tests rewrite its migration history. */
describe('migrate', () => {
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

  /** What the pre-release migrations left on top of today's schema. */
  async function pretendPreRelease(names: readonly string[]): Promise<void> {
    // Nothing of the migrations written after the fold.
    for (const m of migrations.slice(FOLDED_MIGRATIONS.length).reverse()) await m.down(db);
    await db.raw('ALTER TABLE outbox ADD COLUMN published_at timestamptz(3)');
    await db.raw('CREATE INDEX outbox_unpublished_idx ON outbox (seq) WHERE published_at IS NULL');
    await db.raw('CREATE PROCEDURE intake_store_submission() LANGUAGE sql AS $$ SELECT 1 $$');
    await db('knex_migrations').delete();
    await db('knex_migrations').insert(names.map((n) => ({ name: n, batch: 1, migration_time: new Date() })));
  }

  it('adopts a development database migrated by the pre-release migrations: the shims go, the history is the folded one', async () => {
    await pretendPreRelease(PRE_RELEASE_MIGRATIONS);
    await db('outbox').insert([
      { event_id: 'already-out', subject: 'submission.created', payload: '{}', published_at: new Date() },
      { event_id: 'waiting', subject: 'submission.created', payload: '{}' },
    ]);
    await migrate(db);
    // The folded history, then every later migration, which really ran (not merely recorded).
    expect(await db('knex_migrations').orderBy('id').pluck('name')).toEqual(migrations.map((m) => m.name));
    expect((await db('knex_migrations').orderBy('id').pluck('name')).slice(0, 2)).toEqual([...FOLDED_MIGRATIONS]);
    expect(await db.schema.hasTable('console_sessions')).toBe(true);
    expect(await db.schema.hasColumn('notifications', 'claimed_at')).toBe(true);
    expect(await db.schema.hasColumn('outbox', 'published_at')).toBe(false);
    expect((await db.raw(`SELECT 1 FROM pg_proc WHERE proname = 'intake_store_submission'`)).rows).toEqual([]);
    expect(await db('outbox').orderBy('seq').pluck('event_id')).toEqual(['waiting']);
    await db('outbox').delete();
    await migrate(db); // and again: nothing left to do
  });

  it('refuses any other unknown history with a message that says what to do', async () => {
    await pretendPreRelease(PRE_RELEASE_MIGRATIONS.slice(0, 3));
    const failure = migrate(db);
    await expect(failure).rejects.toBeInstanceOf(UnknownMigrationsError);
    await expect(failure).rejects.toThrow(/001-initial, 040-usage-indexes, 090-json-field-order.*new database/);
  });
});

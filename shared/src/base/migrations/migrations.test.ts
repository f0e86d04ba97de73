import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDb, ensureDatabase, migrate, UnknownMigrationsError, type Db } from '../db';
import { migrations } from './index';

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
    await expect(failure).rejects.toThrow(/001-initial, 040-usage-indexes, 090-json-field-order.*new database/);
  });
});

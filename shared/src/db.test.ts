import { createTestPlatform, type TestPlatform } from './testing';
import { runPrepared } from './db';

describe('runPrepared', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await createTestPlatform();
  });
  afterAll(() => platform.close());

  it('runs a named statement on a pooled connection, and again on a connection that has it prepared', async () => {
    for (let i = 0; i < 3; i++) {
      expect(await runPrepared<{ n: number }>(platform.db, { name: 'db_test_add', text: 'SELECT $1::int + 1 AS n', values: [i] })).toEqual([{ n: i + 1 }]);
    }
  });

  it('refuses a transaction (a procedure that commits could not run on its connection)', async () => {
    await platform.db.transaction(async (trx) => {
      await expect(runPrepared(trx, { name: 'db_test_one', text: 'SELECT 1', values: [] })).rejects.toThrow(/not inside a transaction/);
    });
  });
});

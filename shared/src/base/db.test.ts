import { eventually, useTestPlatform } from '../testing';
import { createDb, mayHaveCommitted, runPrepared } from './db';

describe('runPrepared', () => {
  const platform = useTestPlatform();

  it('runs a named statement on a pooled connection, and again on a connection that has it prepared', async () => {
    for (let i = 0; i < 3; i++) {
      expect(
        await runPrepared<{ n: number }>(platform.db, {
          name: 'db_test_add',
          text: 'SELECT $1::int + 1 AS n',
          values: [i],
        }),
      ).toEqual([{ n: i + 1 }]);
    }
  });

  it('refuses a transaction (a procedure that commits could not run on its connection)', async () => {
    await platform.db.transaction(async (trx) => {
      await expect(runPrepared(trx, { name: 'db_test_one', text: 'SELECT 1', values: [] })).rejects.toThrow(
        /not inside a transaction/,
      );
    });
  });
});

describe('mayHaveCommitted', () => {
  const platform = useTestPlatform();

  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: unknown) => err,
    );

  it('is false when Postgres answered with an error (the statement rolled back) or no connection was had', async () => {
    const refused = await failure(
      runPrepared(platform.db, { name: 'db_test_div', text: 'SELECT 1 / $1::int', values: [0] }),
    );
    expect([(refused as { code?: string }).code, mayHaveCommitted(refused)]).toEqual(['22012', false]);
    const unreachable = createDb('postgres://postgres@127.0.0.1:1/none');
    try {
      const err = await failure(unreachable.raw('SELECT 1'));
      expect([(err as { code?: string }).code, mayHaveCommitted(err)]).toEqual(['ECONNREFUSED', false]);
    } finally {
      await unreachable.destroy();
    }
  });

  it('is true when the server process ran the statement and went away with a FATAL error, and names that process', async () => {
    const running = failure(
      runPrepared(platform.db, {
        name: 'db_test_sleep',
        text: "SELECT pg_sleep(5) WHERE $1::text = 'x'",
        values: ['x'],
      }),
    );
    const pid = await eventually(
      async () =>
        (
          await platform.db.raw(
            `SELECT pid FROM pg_stat_activity
             WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep(5)%' AND pid <> pg_backend_pid()`,
          )
        ).rows[0]?.pid,
    );
    await platform.db.raw('SELECT pg_terminate_backend(?)', [pid]);
    const err = await running;
    expect([
      (err as { code?: string }).code,
      (err as { severity?: string }).severity,
      (err as { backendPid?: number }).backendPid,
      mayHaveCommitted(err),
    ]).toEqual(['57P01', 'FATAL', pid, true]);
  });
});

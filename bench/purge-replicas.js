/**
 * The retention purge on two management replicas at once, at its production pace (batches of 200, duty 0.1): rows
 * removed per second of wall time, and the rows a replica selected that the other removed first (`raced`: double
 * work). `BENCH_PURGE_UNCOORDINATED=1` runs them without the forms' advisory locks, as every replica did before.
 *
 *   node bench/purge-replicas.js            # after: the forms' locks
 *   BENCH_PURGE_UNCOORDINATED=1 node bench/purge-replicas.js
 *   BENCH_PURGE_REPLICAS=1 node bench/purge-replicas.js   # one replica, for comparison
 *
 * Seeds BENCH_PURGE_FORMS forms (6) of BENCH_PURGE_ROWS expired submissions each (800) in a database of its own
 * (intake_bench_purge), which it drops at the end. Each replica has its own pool of 2, as bench/data-purger.js.
 */
const path = require('node:path');
const { createDb, createLogger, ensureDatabase, LocalBlobStore } = require('../shared/dist/base');
const { newId } = require('../shared/dist/contracts');
const { migrate } = require('../shared/dist/schema');
const { factories } = require('../shared/dist/testing');
const { purgeDue } = require(path.join(__dirname, '../services/management/dist/lifecycle/purge'));

const base = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/intake_bench_purge';
const FORMS = Number(process.env.BENCH_PURGE_FORMS ?? 6);
const ROWS = Number(process.env.BENCH_PURGE_ROWS ?? 800);
const RUNS = Number(process.env.BENCH_PURGE_RUNS ?? 3);
const uncoordinated = process.env.BENCH_PURGE_UNCOORDINATED === '1';
const REPLICAS = Number(process.env.BENCH_PURGE_REPLICAS ?? 2);

async function seed(db) {
  await db.raw('TRUNCATE accounts CASCADE');
  const account = (await factories.account(db)).id;
  for (let f = 0; f < FORMS; f++) {
    const form = (await factories.form(db, account)).id;
    await db('forms').where({ id: form }).update({ retention_days: 30 });
    await db.raw(
      `INSERT INTO submissions (id, account_id, form_id, status, payload, received_at)
       SELECT ? || '_' || g, ?, ?, 'received', '{"name":"Ada"}', now() - interval '40 days' + g * interval '1 second'
       FROM generate_series(1, ?) g`,
      [newId('submission'), account, form, ROWS],
    );
  }
}

async function main() {
  await ensureDatabase(base);
  const admin = createDb(base, { poolMax: 2 });
  await migrate(admin);
  const replicas = Array.from({ length: REPLICAS }, () => createDb(base, { poolMax: 2 }));
  const deps = (db) => ({
    db,
    blobs: new LocalBlobStore(path.join(require('node:os').tmpdir(), 'intake-bench-purge')),
    logger: createLogger({ level: 'silent', service: 'bench' }),
    clock: { now: () => new Date() },
    uncoordinated,
  });
  const results = [];
  for (let run = 0; run < RUNS; run++) {
    await seed(admin);
    const started = performance.now();
    const counts = await Promise.all(replicas.map((db) => purgeDue(deps(db))));
    const seconds = (performance.now() - started) / 1000;
    const removed = counts.reduce((n, c) => n + c.retention, 0);
    const raced = counts.reduce((n, c) => n + c.raced, 0);
    const rate = removed / seconds;
    results.push(rate);
    console.log(
      JSON.stringify({
        run: run + 1,
        uncoordinated,
        removed,
        seconds: Number(seconds.toFixed(1)),
        rowsPerSecond: Math.round(rate),
        raced,
        perReplica: counts.map((c) => ({ removed: c.retention, raced: c.raced, skipped: c.skipped })),
      }),
    );
  }
  console.log(
    `rows/s over ${RUNS} runs, ${REPLICAS} replicas (${uncoordinated ? 'uncoordinated' : 'forms locked'}): ` +
      `${results.map((r) => Math.round(r)).join(', ')}; min ${Math.round(Math.min(...results))}, max ${Math.round(Math.max(...results))}`,
  );
  await Promise.all([...replicas, admin].map((db) => db.destroy()));
  const drop = createDb(base.replace(/\/[^/]+$/, '/postgres'), { poolMax: 1 });
  await drop.raw(`DROP DATABASE IF EXISTS ${new URL(base).pathname.slice(1)} WITH (FORCE)`);
  await drop.destroy();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

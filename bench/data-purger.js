/**
 * The `data` suite's purge, in a process of its own as in management (bench/data-measure.js forks it): run in the
 * suite's process it shared an event loop with autocannon, whose latencies then counted the purge's JavaScript too.
 * Protocol over IPC: it sends `ready` once connected; `start` runs `purgeDue`; `stop` aborts it between batches; it
 * answers `done` with the counts and the milliseconds from start to end, then exits.
 */
const path = require('node:path');
const { createDb, createLogger, LocalBlobStore } = require('../shared/dist/base');
const { purgeDue } = require(path.join(__dirname, '../services/management/dist/lifecycle/purge'));

const db = createDb(process.env.DATABASE_URL, { poolMax: 2 });
const controller = new AbortController();
const pace = JSON.parse(process.env.BENCH_PURGE_PACE ?? '{}');

async function run() {
  const started = performance.now();
  const counts = await purgeDue({
    db,
    blobs: new LocalBlobStore(process.env.FILES_DIR),
    logger: createLogger({ level: 'silent', service: 'bench' }),
    clock: { now: () => new Date() },
    signal: controller.signal,
    ...pace,
  });
  process.send({ type: 'done', counts, ms: performance.now() - started });
  await db.destroy();
  process.disconnect();
}

process.on('message', (m) => {
  if (m.type === 'start') run().catch((err) => (console.error(err), process.exit(1)));
  if (m.type === 'stop') controller.abort();
});
db.raw('SELECT 1').then(() => process.send({ type: 'ready' }));

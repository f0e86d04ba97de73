/**
 * Data at scale: a form of 10,000 submissions against one of 1,000,000 (BENCH_DATA_ROWS), in a table of 5,000,000
 * across forms (BENCH_DATA_TABLE_ROWS), seeded in bulk with SQL and kept between runs (bench/data-seed.js), measured
 * through a real management process: the inbox's first page, a page deep in a cursor, a status + date-range filter, a
 * text search for a word in 0.1 % of the rows and the data-subject lookup (each the median of 9 requests, in three
 * rounds with small and large in turns; the figure is the ratio of the summed medians, each round's ratio shows the
 * spread); the count of a filter (exact up to 10,000, else the planner's "about N"); a month's per-day usage; the CSV
 * and NDJSON exports (rows per second and the management process's peak RSS growth); and the retention purge's rate
 * (one row in ten with a file on the local store), run by a process of its own as in management, with ingest's p99
 * while it runs against its p99 without it (three turns). Targets: large within 2× of small for page, deep page,
 * filter, search and lookup; export RSS growth < 64 MB; ingest p99 during a purge within 1.5× of without.
 * BENCH_DATA_PARTS (queries,counts,exports,purge) picks parts and BENCH_PURGE_PACE (JSON: batchSize, duty) the purge's
 * pace, for trying one.
 */
const os = require('node:os');
const { rmSync } = require('node:fs');
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { ensureDatabase, createDb } = require('../../shared/dist/base');
const { migrate } = require('../../shared/dist/schema');
const { freePort, startProcess } = require('../lib');
const { median, smallAgainstLarge } = require('../stack');
const { seeded, DATABASE_URL, RARE_WORD } = require('../data-seed');
const { measureExports, measurePurge, report } = require('../data-measure');

const ROOT = path.join(__dirname, '..', '..');
const DAY_MS = 86_400_000;
const REPEATS = 9;
const ROUNDS = 3;

/** The five inbox and lookup requests of a form: a page, a deep page, a filter, a search, a data-subject lookup. */
async function requestsOf(db, management, form) {
  const rows = Number((await db('submissions').where({ form_id: form.formId }).count({ n: '*' }).first()).n);
  const deep = await db('submissions')
    .where({ form_id: form.formId })
    .orderBy([
      { column: 'received_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .offset(Math.floor(rows / 2))
    .first('received_at', 'id');
  const cursor = Buffer.from(JSON.stringify([deep.received_at.toISOString(), deep.id])).toString('base64url');
  const now = Date.now();
  const since = new Date(now - 100 * DAY_MS).toISOString();
  const until = new Date(now - 70 * DAY_MS).toISOString();
  const list = `${management.url}/v1/forms/${form.formId}/submissions?limit=25`;
  const person = `person${Math.floor(rows / 2) + 3}@example.test`;
  return {
    'first page': `${list}`,
    'deep page (cursor at the middle)': `${list}&cursor=${cursor}`,
    'status + 30-day range': `${list}&status=received&since=${since}&until=${until}`,
    [`search (a word in 0.1 %)`]: `${list}&q=${RARE_WORD}`,
    'data-subject lookup': `${management.url}/v1/data-subjects/submissions?email=${person}`,
  };
}

/** Each request's median at small and at large, in ROUNDS turns; per request the ratio and its spread. */
async function measureQueries({ db, management, forms, log }) {
  const urls = {
    small: await requestsOf(db, management, forms.small),
    large: await requestsOf(db, management, forms.large),
  };
  const keys = { small: forms.small.key, large: forms.large.key };
  return smallAgainstLarge({ urls, keys, rounds: ROUNDS, repeats: REPEATS, log, what: 'form' });
}

/** Count (exact, or the planner's estimate beyond 10,000) and a month's per-day usage, at small and at large. */
async function measureCountAndUsage({ db, forms }) {
  const { countOrEstimate } = require(path.join(ROOT, 'services/management/dist/submissions/submission.repository'));
  const { findUsageByDay } = require(path.join(ROOT, 'services/usage/dist/repositories/usage.repository'));
  const month = new Date(Date.now() - 40 * DAY_MS);
  const from = `${month.toISOString().slice(0, 7)}-01`;
  const next = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
  const out = {};
  for (const side of ['small', 'large']) {
    const filter = { accountId: forms[side].accountId, formId: forms[side].formId, status: 'received' };
    // The answer once, then the median time of REPEATS, like the requests above.
    const countOf = async (f) => ({
      result: await countOrEstimate(db, f),
      ms: await median(() => countOrEstimate(db, f), REPEATS),
    });
    const count = await countOf(filter);
    const rare = await countOf({ ...filter, q: RARE_WORD });
    const usageMs = await median(() => findUsageByDay(db, forms[side].accountId, from, next), REPEATS);
    out[side] = { count, rare, usageMs };
  }
  return out;
}

/** Starts a service process on the suite's database. */
async function startService(service, env) {
  const port = await freePort();
  const p = await startProcess(
    path.join(ROOT, 'services', service, 'dist', 'main.js'),
    { ...env, PORT: String(port) },
    `http://127.0.0.1:${port}/readyz`,
  );
  return { ...p, url: `http://127.0.0.1:${port}` };
}

exports.run = async function run({ duration, log }) {
  await ensureDatabase(DATABASE_URL);
  const db = createDb(DATABASE_URL, { poolMax: 4 });
  await migrate(db);
  const forms = await seeded(db, log);
  const env = {
    DATABASE_URL,
    NATS_PREFIX: `benchdata${randomBytes(3).toString('hex')}`,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    PURGE_INTERVAL_SECONDS: '86400',
    RATE_LIMIT_POINTS: '1000000000',
    FILES_DIR: path.join(os.tmpdir(), `intake-bench-data-${process.pid}`),
  };
  const management = await startService('management', env);
  const ingest = await startService('ingest', env);
  // BENCH_DATA_PARTS (e.g. `purge`) measures some parts only: for trying a setting without the rest.
  const parts = (process.env.BENCH_DATA_PARTS ?? 'queries,counts,exports,purge').split(',');
  const part = (name, fn) => (parts.includes(name) ? fn() : []);
  try {
    const queries = await part('queries', () => measureQueries({ db, management, forms, log }));
    const counts = await part('counts', () => (log('count and usage'), measureCountAndUsage({ db, forms })));
    const exported = await part('exports', () => measureExports({ management, forms, log }));
    const purge = await part('purge', () => measurePurge({ db, ingest, duration, log, env }));
    return report({ queries, counts, exported, purge });
  } finally {
    await management.stop();
    await ingest.stop();
    await db.destroy();
    rmSync(env.FILES_DIR, { recursive: true, force: true });
  }
};

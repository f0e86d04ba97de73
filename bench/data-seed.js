/**
 * The `data` suite's seed (bench/suites/data.js): one form of 10,000 submissions and one of 1,000,000
 * (BENCH_DATA_ROWS), and forms of up to 1,000,000 more until the table holds 5,000,000 (BENCH_DATA_TABLE_ROWS), written
 * in bulk with SQL (not through HTTP) into a database of the suite's own (BENCH_DATA_DATABASE_URL, default
 * intake_bench_data) and kept between runs, so that only the first run pays for it (about 5 minutes on the 2-core box:
 * 100 s of rows, 205 s of index builds).
 */
const { randomBytes } = require('node:crypto');
const { newId } = require('../shared/dist/contracts');
const { managementKeyWithRole } = require('../shared/dist/testing/people');
const { round } = require('./stack');
// What the indexer does after each batch (migration 038), for rows the seed indexes in bulk.
const { mergeSearchPendingLists } = require('../services/management/dist/submissions/search.repository');

const DATABASE_URL = process.env.BENCH_DATA_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/intake_bench_data';
const LARGE = Number(process.env.BENCH_DATA_ROWS ?? 1_000_000);
const SMALL = 10_000;
/** Rows in the whole table (BENCH_DATA_TABLE_ROWS): the rest beyond the two forms go to other forms of 1,000,000 at most. */
const TABLE = Math.max(LARGE + SMALL, Number(process.env.BENCH_DATA_TABLE_ROWS ?? 5_000_000));
const RARE_WORD = 'zephyrine';

/** SQL that writes `rows` submissions of one form: 5 % spam, received over the last 400 days, one rare word per 1,000. */
const SEED_SQL = `
  INSERT INTO submissions (id, account_id, form_id, status, payload, received_at)
  SELECT 'sub_' || substr(md5(:form || g), 1, 26), :account, :form,
         CASE WHEN g % 20 = 0 THEN 'spam' ELSE 'received' END,
         json_build_object('name', 'Person ' || g, 'email', 'person' || g || '@example.test',
           'message', CASE WHEN g % 1000 = 7 THEN 'About the ${RARE_WORD} order ' || g
                           ELSE 'Hello, a question about order ' || g || ' and delivery' END,
           'topic', (ARRAY['sales', 'support', 'billing'])[1 + g % 3]),
         now() - (g::float8 / :rows) * interval '400 days' - interval '1 hour'
  FROM generate_series(:from::int, :to::int) g`;

async function seedForm(db, { accountId, formId, rows, log }) {
  for (let from = 1; from <= rows; from += 100_000) {
    const to = Math.min(rows, from + 99_999);
    await db.raw(SEED_SQL, { form: formId, account: accountId, rows, from, to });
    if (rows > 100_000) log(`  seeded ${to.toLocaleString()} of ${rows.toLocaleString()}`);
  }
}

/**
 * The search indexer's work on seeded rows (of one form, or all), in bulk and at once, as migration 024 indexes an
 * existing table: rows seeded right before a measurement would otherwise be indexed during it, by the management
 * process under test, as if a million posts had just arrived. In id order, as the indexer takes them, so that the two
 * wait for each other on a row both insert instead of deadlocking.
 */
async function indexSeeded(db, formId) {
  // (An empty raw as a binding goes to Postgres as a parameter, `$1`: the clause is left out instead.)
  await db.raw(
    `INSERT INTO submission_search (submission_id, account_id, form_id, bucket, keys, emails)
    SELECT id, account_id, form_id, intake_search_bucket(received_at), intake_search_keys(form_id, received_at, payload),
           intake_subject_emails(payload) FROM submissions ${formId ? 'WHERE form_id = ?' : ''}
    ORDER BY id ON CONFLICT DO NOTHING`,
    formId ? [formId] : [],
  );
  if (formId) await db('search_backlog').where({ form_id: formId }).delete();
  else await db.raw('TRUNCATE search_backlog');
  await mergeSearchPendingLists(db);
}

/** A new account (quota out of the way) with one form (no retention: the management process's own purge leaves it). */
async function accountWithForm(db, name) {
  const accountId = newId('account');
  await db('accounts').insert({ id: accountId, name, plan_id: 'team', quota_override: 1_000_000_000 });
  const formId = newId('form');
  const slug = `${name}-${randomBytes(4).toString('hex')}`;
  await db('forms').insert({ id: formId, account_id: accountId, name, slug, spam_retention_days: null });
  const key = await managementKeyWithRole(db, accountId, 'admin');
  return { accountId, formId, slug, key };
}

/**
 * The small and the large form, and other forms up to TABLE rows in all, seeded once (a table `bench_data_seed`
 * remembers them and their keys): the indexes of the submissions and their search keys are dropped while the rows go
 * in and built again after (far faster than keeping them).
 */
/**
 * The secondary indexes of the two tables as the migrations made them, which the seed drops and builds again: read
 * before the first drop and kept in `bench_data_seed` until the seed is done, so that a seed stopped between the two
 * (the tables then without them) still builds them when it runs again.
 */
async function secondaryIndexes(db) {
  const kept = await db('bench_data_seed').where({ name: 'indexes' }).first();
  if (kept) return kept.v;
  const { rows } = await db.raw(
    `SELECT indexname, indexdef FROM pg_indexes
     WHERE tablename IN ('submissions', 'submission_search') AND indexname NOT LIKE '%_pkey'`,
  );
  await db('bench_data_seed').insert({ name: 'indexes', rows: rows.length, v: JSON.stringify(rows) });
  return rows;
}

async function seeded(db, log) {
  await db.raw('CREATE TABLE IF NOT EXISTS bench_data_seed (name text PRIMARY KEY, rows int, v json)');
  const have = await db('bench_data_seed').select();
  const small = have.find((r) => r.name === 'small' && r.rows === SMALL);
  const large = have.find((r) => r.name === 'large' && r.rows === LARGE);
  const others = have.find((r) => r.name === 'others' && r.rows === TABLE - SMALL - LARGE);
  if (small && large && others) return { small: small.v, large: large.v };
  log(`seeding ${SMALL.toLocaleString()} + ${LARGE.toLocaleString()} submissions, ${TABLE.toLocaleString()} in all`);
  await db.raw('TRUNCATE submissions, submission_files, usage_daily, search_backlog CASCADE');
  await db('bench_data_seed').whereNot({ name: 'indexes' }).delete();
  const indexes = await secondaryIndexes(db);
  for (const i of indexes) await db.raw(`DROP INDEX IF EXISTS ${i.indexname}`);
  const out = {};
  const sizes = [
    ['small', SMALL],
    ['large', LARGE],
  ];
  for (let left = TABLE - SMALL - LARGE, n = 1; left > 0; left -= 1_000_000, n++)
    sizes.push([`other-${n}`, Math.min(left, 1_000_000)]);
  for (const [name, rows] of sizes) {
    out[name] = await accountWithForm(db, `data-${name}`);
    const started = Date.now();
    await seedForm(db, { ...out[name], rows, log });
    log(`  ${name}: ${rows.toLocaleString()} rows in ${round((Date.now() - started) / 1000)} s`);
  }
  let started = Date.now();
  await indexSeeded(db);
  log(`  search keys in ${round((Date.now() - started) / 1000)} s`);
  started = Date.now();
  await db.transaction(async (trx) => {
    // The trigram index sorts far less often with room to do it in memory.
    await trx.raw(`SET LOCAL maintenance_work_mem = '1GB'`);
    for (const i of indexes)
      await trx.raw(i.indexdef.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX IF NOT EXISTS '));
  });
  log(`  indexes built in ${round((Date.now() - started) / 1000)} s`);
  await db.raw(`INSERT INTO usage_daily (account_id, form_id, day, received, spam)
    SELECT account_id, form_id, received_at::date, count(*) FILTER (WHERE status = 'received'),
           count(*) FILTER (WHERE status = 'spam') FROM submissions GROUP BY 1, 2, 3`);
  await db.raw('VACUUM ANALYZE submissions, submission_search, search_backlog, usage_daily');
  await db('bench_data_seed').where({ name: 'indexes' }).delete();
  await db('bench_data_seed').insert([
    { name: 'small', rows: SMALL, v: JSON.stringify(out.small) },
    { name: 'large', rows: LARGE, v: JSON.stringify(out.large) },
    { name: 'others', rows: TABLE - SMALL - LARGE, v: JSON.stringify({}) },
  ]);
  return { small: out.small, large: out.large };
}

module.exports = {
  seeded,
  seedForm,
  indexSeeded,
  accountWithForm,
  DATABASE_URL,
  LARGE,
  SMALL,
  TABLE,
  RARE_WORD,
};

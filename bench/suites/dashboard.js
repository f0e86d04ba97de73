/**
 * Dashboards at scale: an account of 10 forms (1,000 submissions each) against one of 500 forms in 10 projects with
 * 1,000,000 submissions (BENCH_DASHBOARD_ROWS), 90 days of daily usage per form, three in five submissions unread (so
 * the large forms pass the unread cap) and a failing webhook in ten; seeded in bulk with SQL into a database of the
 * suite's own (BENCH_DASHBOARD_DATABASE_URL, default intake_bench_dashboard) and kept between runs. Measured through a
 * real management process: the account's dashboard and a project's (its first page of forms), each the median of 9
 * requests, in three rounds with small and large in turns; the figure is the ratio of the summed medians, each round's
 * ratio shows the spread. Target: large within 2× of small.
 */
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { ensureDatabase, createDb } = require('../../shared/dist/base');
const { newId } = require('../../shared/dist/contracts');
const { migrate } = require('../../shared/dist/schema');
const { managementKeyWithRole } = require('../../shared/dist/testing/people');
const { freePort, startProcess } = require('../lib');
const { round, smallAgainstLarge } = require('../stack');
// What the indexer does after each batch (migration 038), for rows seeded in bulk.
const { mergeSearchPendingLists } = require('../../services/management/dist/submissions/search.repository');

const ROOT = path.join(__dirname, '..', '..');
const DATABASE_URL =
  process.env.BENCH_DASHBOARD_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/intake_bench_dashboard';
const LARGE_ROWS = Number(process.env.BENCH_DASHBOARD_ROWS ?? 1_000_000);
const SHAPES = {
  small: { forms: 10, projects: 1, rows: 10_000 },
  large: { forms: 500, projects: 10, rows: LARGE_ROWS },
};
const REPEATS = 9;
const ROUNDS = 3;

/** One form's submissions over the last 90 days: 5 % spam, three in five unread. */
const SEED_SQL = `
  INSERT INTO submissions (id, account_id, form_id, status, payload, received_at, read_at)
  SELECT 'sub_' || substr(md5(:form || g), 1, 26), :account, :form,
         CASE WHEN g % 20 = 0 THEN 'spam' ELSE 'received' END,
         json_build_object('name', 'Person ' || g, 'email', 'person' || g || '@example.test',
           'message', 'Hello, a question about order ' || g),
         now() - (g::float8 / :rows) * interval '90 days' - interval '1 minute',
         CASE WHEN g % 5 >= 3 THEN now() END
  FROM generate_series(1, :rows::int) g`;

/** An account of `shape`: its projects, forms, submissions, a failing webhook in ten forms, and an admin key. */
async function seedAccount(db, name, shape, log) {
  const accountId = newId('account');
  await db('accounts').insert({ id: accountId, name, plan_id: 'team', quota_override: 1_000_000_000 });
  const projects = [(await db('projects').where({ account_id: accountId }).first('id')).id];
  for (let p = 1; p < shape.projects; p++) {
    projects.push(newId('project'));
    await db('projects').insert({ id: projects[p], account_id: accountId, name: `Client ${p}` });
  }
  const perForm = Math.floor(shape.rows / shape.forms);
  for (let f = 0; f < shape.forms; f++) {
    const formId = newId('form');
    const slug = `${name}-${f}-${randomBytes(3).toString('hex')}`;
    const projectId = projects[f % projects.length];
    await db('forms').insert({ id: formId, account_id: accountId, project_id: projectId, name: `Form ${f}`, slug });
    await db.raw(SEED_SQL, { form: formId, account: accountId, rows: perForm });
    if (f % 10 === 0)
      await db('webhooks').insert({
        id: newId('webhook'),
        account_id: accountId,
        form_id: formId,
        url: 'https://hooks.example/intake',
        secret: 'not used',
        failing_since: new Date(),
      });
    if (f % 100 === 99) log(`  ${name}: ${f + 1} forms seeded`);
  }
  const key = await managementKeyWithRole(db, accountId, 'admin');
  return { accountId, project: projects[projects.length - 1], key };
}

/** Both accounts, seeded once (the table `bench_dashboard_seed` remembers them). */
async function seeded(db, log) {
  await db.raw('CREATE TABLE IF NOT EXISTS bench_dashboard_seed (name text PRIMARY KEY, rows int, v json)');
  const have = await db('bench_dashboard_seed').select();
  const found = Object.fromEntries(have.map((r) => [r.name, r]));
  if (found.small?.rows === SHAPES.small.rows && found.large?.rows === SHAPES.large.rows)
    return { small: found.small.v, large: found.large.v };
  log(`seeding ${SHAPES.small.rows.toLocaleString()} and ${SHAPES.large.rows.toLocaleString()} submissions`);
  await db.raw('TRUNCATE accounts, submissions, usage_daily, search_backlog, bench_dashboard_seed CASCADE');
  const started = Date.now();
  const out = {};
  for (const name of ['small', 'large']) out[name] = await seedAccount(db, `dashboard-${name}`, SHAPES[name], log);
  // What the search indexer would have done with the rows, at once (as bench/data-seed.js does).
  await db.raw(`INSERT INTO submission_search (submission_id, account_id, form_id, bucket, keys, emails)
    SELECT id, account_id, form_id, intake_search_bucket(received_at), intake_search_keys(form_id, received_at, payload),
           intake_subject_emails(payload) FROM submissions ORDER BY id ON CONFLICT DO NOTHING`);
  await db.raw('TRUNCATE search_backlog');
  await mergeSearchPendingLists(db);
  await db.raw(`INSERT INTO usage_daily (account_id, form_id, day, received, spam)
    SELECT account_id, form_id, received_at::date, count(*) FILTER (WHERE status = 'received'),
           count(*) FILTER (WHERE status = 'spam') FROM submissions GROUP BY 1, 2, 3`);
  await db.raw('VACUUM ANALYZE submissions, usage_daily, webhooks, forms');
  log(`  seeded in ${round((Date.now() - started) / 1000)} s`);
  for (const name of ['small', 'large'])
    await db('bench_dashboard_seed').insert({ name, rows: SHAPES[name].rows, v: JSON.stringify(out[name]) });
  return out;
}

exports.run = async function run({ log }) {
  await ensureDatabase(DATABASE_URL);
  const db = createDb(DATABASE_URL, { poolMax: 4 });
  await migrate(db);
  const accounts = await seeded(db, log);
  const port = await freePort();
  const management = await startProcess(
    path.join(ROOT, 'services', 'management', 'dist', 'main.js'),
    {
      DATABASE_URL,
      PORT: String(port),
      NATS_PREFIX: `benchdash${randomBytes(3).toString('hex')}`,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      PURGE_INTERVAL_SECONDS: '86400',
    },
    `http://127.0.0.1:${port}/readyz`,
  );
  const base = `http://127.0.0.1:${port}`;
  const urls = (a) => ({
    'account dashboard (90 days)': `${base}/v1/dashboard?days=90`,
    'project dashboard (90 days, first 25 forms)': `${base}/v1/projects/${a.project}/dashboard?days=90`,
  });
  try {
    const measured = await smallAgainstLarge({
      urls: { small: urls(accounts.small), large: urls(accounts.large) },
      keys: { small: accounts.small.key, large: accounts.large.key },
      rounds: ROUNDS,
      repeats: REPEATS,
      log,
      what: 'account',
    });
    const rows = measured.map((r) => ({ ...r, ratio: round(r.ratio, 2), target: '≤ 2' }));
    const figures = Object.fromEntries(
      rows.map((r) => [
        `${r.name}: 500 forms, 1,000,000 submissions ÷ 10 forms`,
        `${r.ratio} (rounds ${r.rounds.join(', ')}; target ≤ 2)`,
      ]),
    );
    return { rows, figures };
  } finally {
    await management.stop();
    await db.destroy();
  }
};

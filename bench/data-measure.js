/** The `data` suite's export and purge measurements, and its report (bench/suites/data.js). */
const { fork } = require('node:child_process');
const { mkdir, writeFile } = require('node:fs/promises');
const path = require('node:path');
const { request } = require('undici');
const { newId } = require('../shared/dist/contracts');
const { peakGrowth, load, inTurns, WARM_UP_S } = require('./lib');
const { round } = require('./stack');
const { accountWithForm, seedForm, indexSeeded, LARGE, SMALL } = require('./data-seed');

/** Rows of the purge form, seeded again for each turn (more than a turn purges). */
const PURGE_ROWS = 60_000;
const TURNS = 3;
/** One purge row in FILE_EVERY carries a file of FILE_BYTES on the local store, which the purge deletes with it. */
const FILE_EVERY = 10;
const FILE_BYTES = 1024;
const MiB = 1024 * 1024;

/** Streams an export to nowhere, counting its lines. */
async function drain(url, key) {
  const started = performance.now();
  const res = await request(url, { headers: { authorization: `Bearer ${key}` } });
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}`);
  let lines = 0;
  for await (const chunk of res.body) for (const byte of chunk) if (byte === 10) lines++;
  return { lines, seconds: (performance.now() - started) / 1000 };
}

/** Each format at each size: rows per second and the management process's peak RSS growth while it streams. */
async function measureExports({ management, forms, log }) {
  const out = [];
  for (const side of ['small', 'large'])
    for (const format of ['ndjson', 'csv']) {
      log(`exporting the ${side} form as ${format}`);
      const url = `${management.url}/v1/forms/${forms[side].formId}/export.${format}`;
      const mem = await peakGrowth(management.pid, () => drain(url, forms[side].key));
      const rows = mem.result.lines - (format === 'csv' ? 1 : 0);
      out.push({
        name: `${format} export, ${rows.toLocaleString()} rows`,
        rate: Math.round(rows / mem.result.seconds),
        seconds: round(mem.result.seconds),
        rssGrowthMiB: round(mem.growth / MiB),
        side,
        format,
      });
    }
  return out;
}

/** Forks bench/data-purger.js and resolves once it is connected, with `start()` and `stop()` (which resolves with `done`). */
async function forkPurger(env) {
  const child = fork(path.join(__dirname, 'data-purger.js'), [], { env: { ...process.env, ...env } });
  const done = new Promise((resolve, reject) => {
    child.on('message', (m) => m.type === 'done' && resolve(m));
    child.once('exit', (code) => code !== 0 && reject(new Error(`the purger exited with ${code}`)));
  });
  await new Promise((resolve, reject) => {
    child.on('message', (m) => m.type === 'ready' && resolve());
    child.once('error', reject);
  });
  return { start: () => child.send({ type: 'start' }), stop: () => (child.send({ type: 'stop' }), done) };
}

/**
 * Files for one row in FILE_EVERY of the form, as ingest stores them: the submission's file count and bytes, a row
 * each and a file under FILES_DIR.
 */
async function seedFiles(db, form, filesDir) {
  const ids = await db('submissions')
    .where({ form_id: form.formId })
    .whereRaw('abs(hashtext(id)) % ?::int = 0', [FILE_EVERY])
    .update({ file_count: 1, file_bytes: FILE_BYTES })
    .returning('id')
    .then((rows) => rows.map((r) => r.id));
  const files = ids.map((submissionId) => ({
    id: newId('file'),
    submission_id: submissionId,
    account_id: form.accountId,
    field: 'attachment',
    filename: 'attachment.txt',
    content_type: 'text/plain',
    size: FILE_BYTES,
    storage_key: `${form.accountId}/${form.formId}/${submissionId}/attachment`,
  }));
  const body = Buffer.alloc(FILE_BYTES, 'x');
  for (let i = 0; i < files.length; i += 500) {
    const batch = files.slice(i, i + 500);
    await db('submission_files').insert(batch);
    await Promise.all(
      batch.map(async (f) => {
        const file = path.join(filesDir, f.storage_key);
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, body);
      }),
    );
  }
  return files.length;
}

/**
 * One purge turn: a form of PURGE_ROWS due rows purged by a process of its own while ingest is loaded for `duration`;
 * purged rows per second (to the end of the load or of the purge, whichever came first).
 */
async function purgeTurn({ db, deps, url, duration, env }) {
  const form = await accountWithForm(db, 'data-purge');
  await seedForm(db, { ...form, rows: PURGE_ROWS, log: () => undefined });
  await indexSeeded(db, form.formId);
  const files = await seedFiles(db, form, env.FILES_DIR);
  await db('forms').where({ id: form.formId }).update({ retention_days: 1 });
  const purger = await forkPurger(env);
  await db.raw('CHECKPOINT');
  const started = performance.now();
  purger.start();
  const loaded = await load({ url, connections: 8, duration, headers: deps.form, body: deps.body });
  const loadSeconds = (performance.now() - started) / 1000;
  const { counts, ms } = await purger.stop();
  await db('submissions').where({ form_id: form.formId }).delete();
  const seconds = Math.min(ms / 1000, loadSeconds);
  // A purge that ended before the load would flatter the ratio: its share of the load is reported with it.
  const share = round(seconds / loadSeconds, 2);
  return { ...loaded, purged: counts.retention, purgeRate: Math.round(counts.retention / seconds), share, files };
}

/** Ingest's p99 at 8 connections without a purge and while one runs, in TURNS turns; the purge's rate. */
async function measurePurge({ db, ingest, duration, log, env }) {
  const target = await accountWithForm(db, 'data-ingest');
  const url = `${ingest.url}/v1/f/${target.slug}`;
  const deps = {
    form: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'name=Ada&email=ada%40example.com&message=Hello+from+the+benchmark',
  };
  log('warming ingest up');
  // 3 s were too few: the first turn alone ran at 40 % of the next ones' rate (the JIT still at work).
  await load({ url, connections: 8, duration: WARM_UP_S, headers: deps.form, body: deps.body });
  const turns = await inTurns(TURNS, async (side, n) => {
    log(`turn ${n}: ingest ${side === 'a' ? 'alone' : 'while the purge runs'} for ${duration} s`);
    if (side === 'b') return purgeTurn({ db, deps, url, duration, env });
    // As before a purge turn: the same checkpoint, so neither turn pays for the other's dirty pages.
    await db.raw('CHECKPOINT');
    return load({ url, connections: 8, duration, headers: deps.form, body: deps.body });
  });
  // The purged forms' dead rows would otherwise stay in the table the next run's queries read.
  await db.raw('VACUUM submissions, submission_search');
  return turns;
}

const label = (n) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`);
const countText = (c) =>
  `${c.result.exact ? c.result.count.toLocaleString() : `about ${c.result.count.toLocaleString()} (planner)`} in ${round(c.ms, 1)} ms`;

/** The purge's rate and ingest's p99 during it over without: summed over the turns, and each turn's. */
function purgeFigures(purge) {
  const alone = purge.map((t) => t.a.p99);
  const during = purge.map((t) => t.b.p99);
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  const turns = purge.map((t) => round(t.b.p99 / t.a.p99, 2)).join(', ');
  return {
    'purge rate':
      `${purge.map((t) => t.b.purgeRate.toLocaleString()).join(', ')} rows/s, one in ${FILE_EVERY} with a file ` +
      `(${TURNS} turns; running for ${purge.map((t) => t.b.share).join(', ')} of the load)`,
    'ingest p99 during a purge / without':
      `${(sum(during) / sum(alone)).toFixed(2)} (turns ${turns}; p99 ms without ${alone.join('/')}, ` +
      `during ${during.join('/')}; target ≤ 1.5)`,
    'ingest rps during a purge / without': `${(sum(purge.map((t) => t.b.rps)) / sum(purge.map((t) => t.a.rps))).toFixed(2)}`,
  };
}

/** The rows and figures of the suite. */
function report({ queries, counts, exported, purge }) {
  const scale = `${label(LARGE)} / ${label(SMALL)}`;
  const figures = {};
  for (const q of queries)
    figures[`${q.name}: ${scale}`] =
      `${q.ratio.toFixed(2)} (rounds ${q.rounds.join(', ')}; ms small ${q.smallMs.join('/')}, large ${q.largeMs.join('/')}; target ≤ 2)`;
  for (const side of counts.small ? ['small', 'large'] : []) {
    const c = counts[side];
    figures[`count, ${side} (received)`] = countText(c.count);
    figures[`count, ${side} (search)`] = countText(c.rare);
    figures[`per-day usage for a month, ${side}`] = `${round(c.usageMs, 2)} ms`;
  }
  if (counts.small)
    figures[`count (received), time ${scale}`] = (counts.large.count.ms / counts.small.count.ms).toFixed(2);
  for (const e of exported)
    figures[`${e.name}`] = `${e.rate.toLocaleString()} rows/s, RSS growth ${e.rssGrowthMiB} MiB (target < 64 MB)`;
  if (purge.length > 0) Object.assign(figures, purgeFigures(purge));
  const rows = [
    ...queries.map((q) => ({ name: q.name, 'ratio large/small': round(q.ratio, 2), rounds: q.rounds.join(', ') })),
    ...exported.map((e) => ({ name: e.name, rate: e.rate, seconds: e.seconds, 'RSS growth MiB': e.rssGrowthMiB })),
    ...purge.flatMap((t, i) => [
      { name: `ingest alone, turn ${i + 1}`, rps: t.a.rps, p50: t.a.p50, p99: t.a.p99 },
      { name: `ingest during purge, turn ${i + 1}`, rps: t.b.rps, p50: t.b.p50, p99: t.b.p99, rate: t.b.purgeRate },
    ]),
  ];
  return { rows, figures };
}

module.exports = { measureExports, measurePurge, report, PURGE_ROWS };

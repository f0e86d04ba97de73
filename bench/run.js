#!/usr/bin/env node
/**
 * Benchmarks. `node bench/run.js [--only <suite>[,<suite>]] [--scale <factor>] [--duration <seconds>]`.
 * Each suite in bench/suites/<name>.js exports `async run({ duration, scale, log })` returning
 * { rows, figures }; each suite's rows are printed as it ends, then one table of every row, and
 * everything is written to bench/results/<suite>-<time>.json and bench/results/all-<time>.json.
 * `--scale` (or BENCH_SCALE, default 1) shrinks or grows every suite: measured durations are
 * 10 s × scale (unless --duration) and message counts scale with it. Default: under five minutes.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

function args() {
  const out = { only: undefined, duration: undefined, scale: Number(process.env.BENCH_SCALE ?? 1) };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--only') out.only = argv[++i];
    else if (argv[i] === '--duration') out.duration = Number(argv[++i]);
    else if (argv[i] === '--scale') out.scale = Number(argv[++i]);
  }
  if (!(out.scale > 0)) throw new Error('--scale must be a positive number');
  out.duration ??= Math.max(1, Math.round(10 * out.scale));
  return out;
}

async function main() {
  const options = args();
  const dir = path.join(__dirname, 'suites');
  const suites = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.js'))
    .map((f) => f.replace(/\.js$/, ''));
  const wanted = options.only?.split(',');
  const chosen = wanted ? suites.filter((s) => wanted.includes(s)) : suites;
  if (chosen.length === 0) throw new Error(`No suite named ${options.only}; have ${suites.join(', ')}`);
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  const all = [];
  const started = Date.now();
  for (const name of chosen) {
    console.log(`\n== ${name} ==`);
    const result = await require(path.join(dir, name)).run({
      duration: options.duration,
      scale: options.scale,
      log: (...a) => console.log(...a),
    });
    all.push({ suite: name, ...result });
    console.table(result.rows);
    for (const [k, v] of Object.entries(result.figures ?? {})) console.log(`${k}: ${v}`);
    const file = path.join(__dirname, 'results', `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    fs.writeFileSync(
      file,
      JSON.stringify({ suite: name, at: new Date().toISOString(), node: process.version, ...result }, null, 2),
    );
    console.log(`written ${path.relative(process.cwd(), file)}`);
  }
  console.log(
    `\n== all suites (scale ${options.scale}, ${options.duration} s per measurement, ` +
      `${Math.round((Date.now() - started) / 1000)} s in all) ==`,
  );
  console.table(
    all.flatMap((r) =>
      r.rows.map((row) => ({
        suite: r.suite,
        name: row.name,
        'req/s or msg/s': row.rps ?? row.rate ?? row.perSecond,
        'p50 ms': row.p50 ?? '',
        'p99 ms': row.p99 ?? '',
        'µs/msg': row.usPerMessage ?? '',
      })),
    ),
  );
  for (const r of all) for (const [k, v] of Object.entries(r.figures ?? {})) console.log(`${r.suite}: ${k}: ${v}`);
  headline(all);
  const machine = {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
  const file = path.join(__dirname, 'results', `all-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify(
      { at: new Date().toISOString(), scale: options.scale, duration: options.duration, machine, suites: all },
      null,
      2,
    ),
  );
  console.log(`written ${path.relative(process.cwd(), file)}`);
}

/**
 * The ratios that guard the write path and search (issue 43), side by side at the end: ingest and the whole pipeline
 * over the floor for `npm start`, and search and the data-subject lookup at a million rows over ten thousand.
 */
function headline(all) {
  const wanted = [
    ['pipeline', /^npm start: ingest \/ floor/],
    ['pipeline', /^npm start: end to end( \/ floor)?$/],
    ['pipeline', /^npm start: search index lag/],
    ['data', /^search \(a word in 0\.1 %\)/],
    ['data', /^data-subject lookup/],
    ['data', /^ingest p99 during a purge/],
  ];
  const lines = wanted.flatMap(([suite, key]) =>
    Object.entries(all.find((r) => r.suite === suite)?.figures ?? {})
      .filter(([k]) => key.test(k))
      .map(([k, v]) => `  ${suite}: ${k}: ${String(v).split(' (')[0]}`),
  );
  if (lines.length) console.log(`\n== the write path and search ==\n${lines.join('\n')}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

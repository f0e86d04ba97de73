#!/usr/bin/env node
/**
 * Benchmarks. `node bench/run.js [--only <suite>] [--duration <seconds>]`.
 * Each suite in bench/suites/<name>.js exports `async run(ctx)` returning { rows, figures };
 * rows are printed as a table and everything is written to bench/results/<suite>-<time>.json.
 * Add a suite by adding a file there (issue 8).
 */
const fs = require('node:fs');
const path = require('node:path');

function args() {
  const out = { only: undefined, duration: 10 };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--only') out.only = argv[++i];
    else if (argv[i] === '--duration') out.duration = Number(argv[++i]);
  }
  return out;
}

async function main() {
  const options = args();
  const dir = path.join(__dirname, 'suites');
  const suites = fs.readdirSync(dir).filter((f) => f.endsWith('.js')).map((f) => f.replace(/\.js$/, ''));
  const chosen = options.only ? suites.filter((s) => s === options.only) : suites;
  if (chosen.length === 0) throw new Error(`No suite named ${options.only}; have ${suites.join(', ')}`);
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  for (const name of chosen) {
    console.log(`\n== ${name} ==`);
    const result = await require(path.join(dir, name)).run({ duration: options.duration, log: (...a) => console.log(...a) });
    console.table(result.rows);
    for (const [k, v] of Object.entries(result.figures ?? {})) console.log(`${k}: ${v}`);
    const file = path.join(__dirname, 'results', `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    fs.writeFileSync(file, JSON.stringify({ suite: name, at: new Date().toISOString(), node: process.version, ...result }, null, 2));
    console.log(`written ${path.relative(process.cwd(), file)}`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

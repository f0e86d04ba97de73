#!/usr/bin/env node
/**
 * `npm run test:slowest [N]`: the N (15) slowest test files of the last runs (`.test-timings.json`, written by
 * scripts/test-timings.js), with the part each belongs to and the sum of each part.
 */
const { readTimings } = require('./test-timings');

const count = Number(process.argv[2] ?? 15);
const partOf = (file) =>
  /\.alone\.test\.ts$/.test(file)
    ? 'alone'
    : /^(console\/)?test\//.test(file) || /\.process\.test\.ts$/.test(file)
      ? 'system'
      : 'unit';

const files = Object.entries(readTimings().files).map(([file, t]) => ({ file, part: partOf(file), ...t }));
if (files.length === 0) {
  console.log('No timings yet: run npm test (or npm run test:unit) first.');
  process.exit(0);
}
files.sort((a, b) => b.seconds - a.seconds);
const width = Math.max(...files.slice(0, count).map((f) => f.file.length));
console.log(`The ${Math.min(count, files.length)} slowest test files (seconds, part, when measured):`);
for (const f of files.slice(0, count))
  console.log(
    `${f.seconds.toFixed(1).padStart(7)}  ${f.file.padEnd(width)}  ${f.part.padEnd(6)}  ${f.at}${f.failed ? '  (failed)' : ''}`,
  );
const sums = {};
for (const f of files) sums[f.part] = (sums[f.part] ?? 0) + f.seconds;
console.log(
  `Sum of the files' times by part (Jest runs two files at a time, so a part takes about half): ${Object.entries(sums)
    .map(([part, s]) => `${part} ${s.toFixed(0)} s`)
    .join(', ')}`,
);

#!/usr/bin/env node
/**
 * `npm run lint:copies`: counts the blocks of code written twice (jscpd, configured by .jscpd.json at the root: which
 * folders, which formats, how long a block must be) and fails when there are more than BUDGET of them, listing each
 * clone with its two places so the one just written can be found and shared instead. The budget only goes down: when
 * a change removes clones, lower it to the new count in the same commit; never raise it to let a copy in.
 * What is read: the TypeScript, TSX, JavaScript and CSS of shared/src, each service's src and test, console/src and
 * console/test, src, test, bench and scripts, but not the generated console types (openapi.d.ts, operation-roles.ts)
 * nor shared/src/schema/migrations: a migration is history, never edited once it ships, so its repeats are not ours
 * to remove. `node scripts/copies.js --list` prints the clones without judging the count.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** How many clones the tree may hold: the count it reached, lowered whenever a change removes some. */
const BUDGET = 10;

const ROOT = path.join(__dirname, '..');

/** jscpd's JSON report of the tree, as .jscpd.json configures the scan. */
function scan() {
  const output = fs.mkdtempSync(path.join(os.tmpdir(), 'copies-'));
  try {
    const run = spawnSync(
      process.execPath,
      [require.resolve('jscpd/run-jscpd.js'), '--reporters', 'json', '--output', output, '--absolute'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    if (run.status !== 0) throw new Error(`jscpd exited with ${run.status}:\n${run.stdout}${run.stderr}`);
    return JSON.parse(fs.readFileSync(path.join(output, 'jscpd-report.json'), 'utf8'));
  } finally {
    fs.rmSync(output, { recursive: true, force: true });
  }
}

/** One place of a clone as `path:first-last`, the path from the repository's root. */
function place(file) {
  return `${path.relative(ROOT, file.name)}:${file.startLoc.line}-${file.endLoc.line}`;
}

const report = scan();
const clones = report.duplicates;
const over = clones.length > BUDGET;
if (over || process.argv.includes('--list')) {
  for (const clone of clones) {
    console.log(`${place(clone.firstFile)} ~ ${place(clone.secondFile)} (${clone.lines} lines)`);
  }
}
if (over) {
  console.error(
    `${clones.length} clones, over the budget of ${BUDGET} (scripts/copies.js): share the code written twice in one ` +
      'of the pairs above (the new one is among them) instead of copying it.',
  );
  process.exitCode = 1;
} else if (clones.length < BUDGET) {
  console.log(`${clones.length} clones, budget ${BUDGET}: lower BUDGET in scripts/copies.js to ${clones.length}.`);
} else {
  console.log(`${clones.length} clones, at the budget of ${BUDGET}.`);
}

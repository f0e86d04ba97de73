/**
 * A Jest reporter (jest.config.js): after every run, each test file's time (seconds, from its first test's start to its
 * last's end, as Jest measures it) and when it was measured are written to `.test-timings.json` at the repository's
 * root, merged with what earlier runs wrote, so that a run of one part keeps the other parts' times.
 * `npm run test:slowest` (scripts/slowest-tests.js) lists the slowest.
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const FILE = path.join(ROOT, '.test-timings.json');

/** What `.test-timings.json` holds, or an empty report when it is missing or unreadable. */
function readTimings() {
  try {
    const report = JSON.parse(fs.readFileSync(FILE, 'utf8'));
    return report && typeof report.files === 'object' ? report : { files: {} };
  } catch {
    return { files: {} };
  }
}

/** A file's tier, by its Jest project (jest.config.js): `*:unit`, the workspaces' own (integration), or system. */
function tierOf(file) {
  if (process.env.JEST_ALONE === '1') return 'alone';
  const project = (file.displayName && file.displayName.name) || '';
  if (project.endsWith(':unit')) return 'unit';
  if (project === 'system' || project === 'console' || project.endsWith(':processes')) return 'system';
  return 'integration';
}

class TestTimings {
  onRunComplete(_contexts, results) {
    const report = readTimings();
    const at = new Date().toISOString();
    const tiers = new Map();
    for (const file of results.testResults) {
      const { start, end } = file.perfStats;
      if (!start || !end) continue;
      const tier = tiers.get(tierOf(file)) ?? { files: 0, seconds: 0 };
      tiers.set(tierOf(file), { files: tier.files + 1, seconds: tier.seconds + (end - start) / 1000 });
      report.files[path.relative(ROOT, file.testFilePath)] = {
        seconds: Math.round(end - start) / 1000,
        failed: file.numFailingTests > 0 || Boolean(file.testExecError),
        at,
      };
    }
    fs.writeFileSync(FILE, `${JSON.stringify(report, null, 1)}\n`);
    // The files' own times added up, per tier (two workers run files side by side: more than the wall time).
    const summary = [...tiers].map(([tier, t]) => `${tier} ${t.files} files, ${t.seconds.toFixed(0)} s`);
    if (summary.length > 0) console.log(`File time by tier: ${summary.join('; ')}`);
  }
}

module.exports = TestTimings;
module.exports.readTimings = readTimings;

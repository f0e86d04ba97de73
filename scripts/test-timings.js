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

class TestTimings {
  onRunComplete(_contexts, results) {
    const report = readTimings();
    const at = new Date().toISOString();
    for (const file of results.testResults) {
      const { start, end } = file.perfStats;
      if (!start || !end) continue;
      report.files[path.relative(ROOT, file.testFilePath)] = {
        seconds: Math.round(end - start) / 1000,
        failed: file.numFailingTests > 0 || Boolean(file.testExecError),
        at,
      };
    }
    fs.writeFileSync(FILE, `${JSON.stringify(report, null, 1)}\n`);
  }
}

module.exports = TestTimings;
module.exports.readTimings = readTimings;

/**
 * Jest's globalTeardown (jest.config.js): kills every process of this run that is still running (those carrying the
 * run's mark, see scripts/test-processes.js), e.g. the children of a worker that Jest had to kill, and says which.
 */
const { marked, killAll } = require('./test-processes');

module.exports = async function killWhatTheRunLeft() {
  const run = process.env.INTAKE_TEST_RUN;
  if (!run) return;
  const killed = killAll(marked(run, [process.pid, process.ppid]));
  if (killed.length > 0)
    process.stderr.write(`the test run left ${killed.length} process(es) running, killed:\n  ${killed.join('\n  ')}\n`);
};

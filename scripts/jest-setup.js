/**
 * Jest's globalSetup (jest.config.js): marks the run (INTAKE_TEST_RUN, inherited by every worker and every process a
 * test starts, which scripts/jest-teardown.js finds and stops at the end) and starts it on fresh test databases.
 */
const { randomBytes } = require('node:crypto');
const freshTestDatabases = require('./jest-fresh-databases');

module.exports = async function setUpTestRun() {
  process.env.INTAKE_TEST_RUN = randomBytes(6).toString('hex');
  // The unit tier reaches no Postgres: it needs no databases, and runs where none is up.
  if (process.env.JEST_PART !== 'unit') await freshTestDatabases();
};

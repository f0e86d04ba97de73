/**
 * The test environment of every test file (jest.config.js): Node's, and when the file is done (its afterAll hooks
 * included, passed or failed) every process still running below the Jest process that ran it is killed: a service, a
 * NATS or Postgres of its own, a browser, whatever a failing test did not stop (scripts/test-processes.js).
 */
const { TestEnvironment } = require('jest-environment-node');
const { killDescendants } = require('./test-processes');

class IntakeTestEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async teardown() {
    const killed = killDescendants();
    if (killed.length > 0)
      process.stderr.write(
        `${this.testPath}: killed ${killed.length} process(es) the file left running:\n  ${killed.join('\n  ')}\n`,
      );
    await super.teardown();
  }
}

module.exports = IntakeTestEnvironment;

/**
 * The unit tier's guard (jest.config.js `setupFilesAfterEnv` for `*.unit.test.ts`): a unit test is pure, it reaches no
 * Postgres, NATS or Redis. While a unit file runs, a connection to one of their ports fails at once with the reason,
 * so a test that needs a server is named an integration test (`*.test.ts`) instead of passing by luck of what runs.
 * Node's `net` is shared by every file a Jest worker runs, so the guard is put back when the file ends: the next file
 * in the worker may be an integration test.
 */
const net = require('node:net');

const SERVER_PORTS = new Map([
  [5432, 'Postgres'],
  [4222, 'NATS'],
  [6379, 'Redis'],
]);
for (const name of ['DATABASE_URL', 'DATABASE_DIRECT_URL', 'NATS_URL', 'REDIS_URL']) delete process.env[name];

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  const options = typeof args[0] === 'object' && args[0] !== null ? args[0] : { port: args[0] };
  const server = SERVER_PORTS.get(Number(options.port));
  if (server)
    throw new Error(
      `a unit test reaches no ${server} (port ${options.port}): name the file *.test.ts (the integration tier) ` +
        'or take the decision out of the I/O as a pure function',
    );
  return connect.apply(this, args);
};
// eslint-disable-next-line no-undef -- Jest's global in a setup file run after the environment
afterAll(() => {
  net.Socket.prototype.connect = connect;
});

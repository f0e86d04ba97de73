/**
 * The unit tier's guard (jest.config.js, `*.unit.test.ts`): a unit test is pure, it reaches no Postgres, NATS or Redis.
 * A connection to one of their ports, or to the address a setting names, fails at once with the reason, so a test that
 * needs a server is moved to the integration tier (`*.test.ts`) instead of passing here by luck of what runs.
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

/** One Jest run over every workspace; each Jest worker gets its own Postgres database (see shared/src/testing). */
const path = require('node:path');

const ESM_ONLY = '(openid-client|oauth4webapi|jose|@scure/base|@noble/hashes)';
const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
  ],
  // openid-client and what it imports, and otplib's base32 and hash libraries, are ES modules only; Jest's module
  // system loads CommonJS.
  [`/node_modules/${ESM_ONLY}/.+\\.js$`]: [
    '@swc/jest',
    { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } },
  ],
};
// Nested copies too (otplib's own @noble/hashes).
const transformIgnorePatterns = [`^(?!.*/node_modules/${ESM_ONLY}/).*/node_modules/`];
const moduleNameMapper = {
  '^@intake/shared$': path.join(__dirname, 'shared/src/index.ts'),
  '^@intake/shared/testing$': path.join(__dirname, 'shared/src/testing/index.ts'),
  '^@intake/shared/register$': path.join(__dirname, 'shared/src/register.ts'),
  '^@intake/(ingest|management|delivery|usage)$': path.join(__dirname, 'services/$1/src/index.ts'),
};

const project = (name, dir) => ({
  displayName: name,
  rootDir: path.join(__dirname, dir),
  testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  testEnvironment: 'node',
  transform,
  transformIgnorePatterns,
  moduleNameMapper,
});

/**
 * Tests that time something under a load of their own (`*.alone.test.ts`: one account beside another's load, a NATS
 * cluster electing leaders while posts flow) run after the others, one at a time (`JEST_ALONE=1`, the second half of
 * `npm test`): beside the other test files on two cores it is the machine's load they would measure (the cluster test
 * took 88 s alone, 123 s or 268 s and its deadlines missed beside the console's Chromium tests).
 */
const ALONE = /\.alone\.test\.ts$/;
const alone = process.env.JEST_ALONE === '1';

const projects = [
  project('shared', 'shared'),
  project('ingest', 'services/ingest'),
  project('management', 'services/management'),
  project('delivery', 'services/delivery'),
  project('usage', 'services/usage'),
  ...(require('node:fs').existsSync(path.join(__dirname, 'test')) ? [project('system', '.')] : []),
].map((p) => (p.displayName === 'system' ? { ...p, testMatch: ['<rootDir>/test/**/*.test.ts'] } : p));

module.exports = {
  projects: alone
    ? projects
        .filter((p) => p.displayName === 'system')
        .map((p) => ({ ...p, testMatch: ['<rootDir>/test/**/*.alone.test.ts'] }))
    : projects.map((p) => ({ ...p, testPathIgnorePatterns: ['/node_modules/', ALONE.source] })),
  testTimeout: 30000,
  maxWorkers: alone ? 1 : process.env.CI ? 2 : '50%',
};

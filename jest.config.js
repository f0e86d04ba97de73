/** One Jest run over every workspace; each Jest worker gets its own Postgres database (see shared/src/testing). */
const path = require('node:path');

const ESM_ONLY = '(openid-client|oauth4webapi|jose|@scure/base|@noble/hashes|@octokit/webhooks-methods)';
const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
  ],
  // openid-client and what it imports, otplib's base32 and hash libraries, and Octokit's webhook signature check are ES
  // modules only; Jest's module system loads CommonJS.
  [`/node_modules/${ESM_ONLY}/.+\\.js$`]: [
    '@swc/jest',
    { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } },
  ],
};
// Nested copies too (otplib's own @noble/hashes).
const transformIgnorePatterns = [`^(?!.*/node_modules/${ESM_ONLY}/).*/node_modules/`];
const moduleNameMapper = {
  // @intake/shared's layers (shared/package.json's exports): '@intake/shared/base' is shared/src/base/index.ts.
  '^@intake/shared/(base|contracts|schema|telemetry|auth|messaging|audit|webhooks|submissions|http|runtime)$':
    path.join(__dirname, 'shared/src/$1/index.ts'),
  '^@intake/shared/testing$': path.join(__dirname, 'shared/src/testing/index.ts'),
  '^@intake/shared/register$': path.join(__dirname, 'shared/src/register.ts'),
  '^@intake/shared/ordered-json$': path.join(__dirname, 'shared/src/base/ordered-json.ts'),
  '^@intake/(ingest|management|delivery|usage)$': path.join(__dirname, 'services/$1/src/index.ts'),
  // Management serves the OpenAPI document the build wrote (platform/built-openapi.ts); in Jest, the same document
  // built from the four services' sources, so a test serves the routes it runs.
  '(^|/)platform/built-openapi$': path.join(__dirname, 'scripts/openapi-document.js'),
  // Its package exports an `import` entry only, which Jest's require does not take.
  '^@octokit/webhooks-methods$': path.join(__dirname, 'node_modules/@octokit/webhooks-methods/dist-node/index.js'),
};

const project = (name, dir) => ({
  displayName: name,
  rootDir: path.join(__dirname, dir),
  testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  // Node's, killing what a file left running when it ends (scripts/jest-environment.js).
  testEnvironment: path.join(__dirname, 'scripts/jest-environment.js'),
  transform,
  transformIgnorePatterns,
  moduleNameMapper,
});

/**
 * Every run starts on fresh test databases (scripts/jest-fresh-databases.js) and adds each file's time to
 * `.test-timings.json` (scripts/test-timings.js); `npm run test:slowest` lists them. The tiers: see projects() below.
 */
/**
 * How long a test waits for a process it starts (a service's `/readyz`, a NATS or Postgres of its own) before it
 * fails: INTAKE_TEST_STARTUP_MS, 60 s unless set; generous, since on a loaded machine a start-up is slow, not broken
 * (shared/src/testing/processes.ts's startupBudgetMs reads the same).
 */
const startupBudgetMs = Number(process.env.INTAKE_TEST_STARTUP_MS ?? 60_000);
if (!Number.isFinite(startupBudgetMs) || startupBudgetMs <= 0)
  throw new Error(`INTAKE_TEST_STARTUP_MS is a number of milliseconds, not ${process.env.INTAKE_TEST_STARTUP_MS}`);

const UNIT = /\.unit\.test\.ts$/;
const ALONE = /\.alone\.test\.ts$/;
const PROCESS = /\.process\.test\.ts$/;
const alone = process.env.JEST_ALONE === '1';
const PARTS = ['unit', 'integration', 'system'];
/** JEST_PART: one tier, or several joined by `+` (`integration+system`: one run, both on the workers at once). */
const parts = process.env.JEST_PART ? process.env.JEST_PART.split('+') : PARTS;
for (const p of parts) if (!PARTS.includes(p)) throw new Error(`JEST_PART is made of ${PARTS.join(', ')}, not ${p}`);

const workspaces = [
  project('shared', 'shared'),
  project('ingest', 'services/ingest'),
  project('management', 'services/management'),
  project('delivery', 'services/delivery'),
  project('usage', 'services/usage'),
];
const testsUnder = (name, dir) =>
  require('node:fs').existsSync(path.join(__dirname, dir, 'test'))
    ? { ...project(name, dir), testMatch: ['<rootDir>/test/**/*.test.ts'] }
    : undefined;
// The system tests, and the console's browser tests (they start the whole stack and Chromium).
const system = [testsUnder('system', '.'), testsUnder('console', 'console')].filter(Boolean);
const ignoring = (p, ...patterns) => ({ ...p, testPathIgnorePatterns: ['/node_modules/', ...patterns] });

/**
 * The tiers (README, "Tests"):
 * - unit (`*.unit.test.ts` in the workspaces and the console's sources): pure, no Postgres, NATS or Redis
 *   (scripts/jest-pure.js refuses a connection to one);
 * - integration (the workspaces' other `*.test.ts`): against the running Postgres, NATS and Redis, no process of its own;
 * - system (`test/`, `console/test/`, `*.process.test.ts`): processes, Chromium, clusters, kills, Helm, fuzz;
 * - alone (JEST_ALONE=1, `*.alone.test.ts`): the tests that put a load of their own on the machine (one account beside
 *   another's load, a NATS cluster electing leaders while posts flow), after the others, one at a time: beside the other
 *   files on two cores it is their load that would decide (the cluster test took 88 s alone, 123 s or 268 s beside the
 *   console's Chromium tests).
 */
function projects() {
  if (alone) return system.map((p) => ({ ...p, testMatch: ['<rootDir>/test/**/*.alone.test.ts'] }));
  const sourcesOf = (p, suffix, name) => ({
    ...p,
    displayName: `${p.displayName}:${name}`,
    testMatch: [`<rootDir>/src/**/*.${suffix}.test.ts`, `<rootDir>/test/**/*.${suffix}.test.ts`],
  });
  const units = [...workspaces, project('console', 'console')].map((p) => ({
    ...sourcesOf(p, 'unit', 'unit'),
    setupFilesAfterEnv: [path.join(__dirname, 'scripts/jest-pure.js')],
  }));
  const integration = workspaces.map((p) => ignoring(p, UNIT.source, ALONE.source, PROCESS.source));
  const processes = workspaces.map((p) => ignoring(sourcesOf(p, 'process', 'processes'), ALONE.source));
  const systems = [...system.map((p) => ignoring(p, ALONE.source)), ...processes];
  const tiers = { unit: units, integration, system: systems };
  return parts.flatMap((p) => tiers[p]);
}

module.exports = {
  projects: projects(),
  globalSetup: path.join(__dirname, 'scripts/jest-setup.js'),
  globalTeardown: path.join(__dirname, 'scripts/jest-teardown.js'),
  reporters: ['default', path.join(__dirname, 'scripts/test-timings.js')],
  // A test's own time, plus a process start-up's budget (a hook that starts a service waits up to that long).
  testTimeout: 30_000 + startupBudgetMs,
  maxWorkers: alone ? 1 : process.env.CI ? 2 : '50%',
  // Tests always run in worker processes, never in Jest's own (Jest runs in band with one worker unless a memory limit
  // is set): what a failing test leaves in its process (a pool, a relay polling) ends with the worker, which Jest
  // stops at the end, instead of holding the run open ("Jest did not exit"). A worker past 2 GB idle is replaced too.
  workerIdleMemoryLimit: '2GB',
};

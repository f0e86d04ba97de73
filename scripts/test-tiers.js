/**
 * `npm test`'s Jest part, tier by tier (jest.config.js): unit first (pure, seconds: a broken decision fails before any
 * server is involved), then integration and system in one run (on the workers at once, as the machine's two cores are
 * best used), then the timed tests alone. Stops at the first tier that fails, with its exit code, and prints each
 * tier's wall time at the end (CI's log shows them). Arguments (paths, `-t`) are passed to every Jest run.
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const JEST = path.join(__dirname, '..', 'node_modules', 'jest', 'bin', 'jest.js');
const TIERS = [
  { name: 'unit', env: { JEST_PART: 'unit' } },
  { name: 'integration + system', env: { JEST_PART: 'integration+system' } },
  { name: 'alone', env: { JEST_ALONE: '1' } },
];

const times = [];
let status = 0;
for (const tier of TIERS) {
  const started = process.hrtime.bigint();
  // Narrowed to some paths, a tier may hold none of them; the whole suite always has all three.
  const narrowed = process.argv.length > 2 ? ['--passWithNoTests', ...process.argv.slice(2)] : [];
  const run = spawnSync(process.execPath, [JEST, '--ci', ...narrowed], {
    stdio: 'inherit',
    env: { ...process.env, ...tier.env },
  });
  times.push(`${tier.name} ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(0)} s`);
  status = run.status ?? 1;
  if (status !== 0) {
    times.push(`(stopped: ${tier.name} failed)`);
    break;
  }
}
console.log(`\nTest tiers: ${times.join(', ')}`);
process.exit(status);

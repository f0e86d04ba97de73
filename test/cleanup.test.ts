import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { eventually } from '@intake/shared/testing';

const ROOT = path.resolve(__dirname, '..');

/** The command lines of the live processes whose environment holds `name=value` (Linux's /proc). */
function processesWith(name: string, value: string): string[] {
  const mark = `${name}=${value}`;
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(mark)) return [];
        if (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z')) return [];
        return [readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()];
      } catch {
        return []; // gone while we read
      }
    });
}

/**
 * Jest on the fixtures in test/fixtures/cleanup (tests that fail on purpose: a fault test in its test, one in its
 * set-up, one leaving a relay polling in its own process), with the suite's own configuration and one worker, as the
 * `.alone` part runs; every process it starts carries a mark of this test's own in its environment.
 */
describe('a run whose fault tests fail', () => {
  it('ends by itself, failed, and leaves no process running', async () => {
    const mark = randomBytes(6).toString('hex');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CLEANUP_FIXTURE_MARK: mark,
      // Its own test databases (its global set-up drops the ones of its tag), and a start-up budget far past this
      // test's time: a process left waiting would hold the run open.
      INTAKE_TEST_DB_TAG: `${process.env['INTAKE_TEST_DB_TAG'] ?? ''}cleanup`,
      INTAKE_TEST_STARTUP_MS: '3600000',
    };
    delete env['JEST_PART'];
    delete env['JEST_ALONE'];
    const jest = spawn(
      process.execPath,
      [require.resolve('jest/bin/jest'), '--ci', '--maxWorkers=1', '--config', 'test/fixtures/cleanup/jest.config.js'],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    jest.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
    jest.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => jest.once('exit', (code) => resolve(code)));
    let ended = false;
    void exited.then(() => (ended = true));

    // What the fixtures start, seen while they run: a NATS of their own, both services, the forgotten tree.
    const seen = new Set<string>();
    await eventually(
      () => {
        for (const command of processesWith('CLEANUP_FIXTURE_MARK', mark)) seen.add(command);
        return ended;
      },
      { timeoutMs: 120_000, intervalMs: 20, message: 'the fixtures’ run to end' },
    );
    const code = await exited;

    expect(code).toBe(1);
    expect(output).toMatch(/Tests:\s+3 failed, 3 total/);
    expect(output).not.toContain('did not exit');
    const started = [...seen].join('\n');
    for (const expected of [
      'nats-server',
      'services/ingest/dist/main.js',
      'services/delivery/dist/main.js',
      'sleep 600',
    ])
      expect(started).toContain(expected);
    expect(processesWith('CLEANUP_FIXTURE_MARK', mark)).toEqual([]);
  });
});

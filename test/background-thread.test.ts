import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { eventually, startupBudgetMs, useTestPlatform } from '@intake/shared/testing';

/**
 * `startBackgroundThread` (the all-in-one's second thread), in a process of its own
 * (`test/fixtures/thread-main.js`): the thread, on a platform of its own, hears the NOTIFY that
 * wakes its relay, stops cleanly, and exits 1 when the thread dies, as a crashed process would.
 */
describe('background thread', () => {
  const t = useTestPlatform();
  const children: ChildProcess[] = [];

  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  function start(env: Record<string, string> = {}) {
    const { config } = t;
    const child = spawn(process.execPath, [path.join(__dirname, 'fixtures/thread-main.js')], {
      env: {
        ...process.env,
        DATABASE_URL: config.DATABASE_URL,
        NATS_URL: config.NATS_URL,
        NATS_PREFIX: config.NATS_PREFIX,
        REDIS_URL: config.REDIS_URL,
        LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, output: () => output, exited, send: (line: string) => child.stdin?.write(`${line}\n`) };
  }

  it('wakes the relays of the thread, which has a platform of its own, and stops it before the process ends', async () => {
    const p = start();
    await eventually(() => p.output().includes('started'), {
      message: 'the thread to start',
      timeoutMs: startupBudgetMs(),
    });
    p.send('wake');
    await eventually(() => p.output().includes('woken, pool intake-thread-test-background'), {
      message: 'the wake-up',
    });
    p.send('stop');
    await eventually(() => p.output().includes('stopped\n'), { message: 'the stop' });
    expect(p.output().indexOf('thread workers stopped')).toBeLessThan(p.output().indexOf('stopped\n'));
    p.child.stdin?.end();
    expect(await p.exited).toBe(0);
  });

  it('still ends its drain normally when the thread breaks while stopping (logged, not fatal)', async () => {
    const p = start({ THREAD_FAIL_STOP: '1' });
    await eventually(() => p.output().includes('started'), {
      message: 'the thread to start',
      timeoutMs: startupBudgetMs(),
    });
    p.send('stop');
    await eventually(() => p.output().includes('stopped\n'), { message: 'the stop' });
    p.child.stdin?.end();
    expect(await p.exited).toBe(0);
    expect(p.output()).toMatch(/"level":"error".*the background thread failed while stopping/);
    expect(p.output()).not.toMatch(/"level":"fatal"/);
  });

  it('takes the process down (exit 1, a fatal log line) when the thread dies', async () => {
    const p = start({ THREAD_CRASH: '1' });
    expect(await p.exited).toBe(1);
    expect(p.output()).toMatch(/"level":"fatal".*the background thread failed: exiting/);
    expect(p.output()).toMatch(/the thread broke/);
  });

  it('fails the start of the process when the thread cannot start', async () => {
    const p = start({ THREAD_FAIL_START: '1' });
    expect(await p.exited).toBe(2);
    expect(p.output()).toMatch(/failed to start: cannot start/);
  });
});

import { sweepSessions, type Platform, type Worker } from '@intake/shared';

/** Removes ended console sessions every `intervalMs` (sessions are also refused and removed when next used). */
export function startSessionSweeper(
  platform: Pick<Platform, 'db' | 'logger' | 'clock'>,
  intervalMs = 10 * 60_000,
): Worker {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= sweepSessions(platform.db, platform.clock.now())
      .catch((err) => platform.logger.warn({ err }, 'console session sweep failed'))
      .finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

import { startPeriodic, sweepSessions, type Platform, type Worker } from '@intake/shared';

/** Removes ended console sessions every `intervalMs` (sessions are also refused and removed when next used). */
export function startSessionSweeper(
  platform: Pick<Platform, 'db' | 'logger' | 'clock'>,
  intervalMs = 10 * 60_000,
): Worker {
  return startPeriodic({
    intervalMs,
    logger: platform.logger,
    failure: 'console session sweep failed',
    task: () => sweepSessions(platform.db, platform.clock.now()),
  });
}

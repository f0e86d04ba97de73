import { purgeAuditLog, startPeriodic, sweepSessions, type Platform, type Worker } from '@intake/shared';

/**
 * The console's periodic upkeep: ended console sessions go every 10 minutes (they are also refused and removed when
 * next used), audit entries older than AUDIT_RETENTION_DAYS every hour (the only delete that table allows).
 */
export function startUpkeep(platform: Pick<Platform, 'db' | 'logger' | 'clock' | 'config'>): Worker[] {
  const { db, logger, clock, config } = platform;
  return [
    startPeriodic({
      intervalMs: 10 * 60_000,
      logger,
      failure: 'console session sweep failed',
      task: () => sweepSessions(db, clock.now()),
    }),
    startPeriodic({
      intervalMs: 60 * 60_000,
      logger,
      failure: 'audit log retention purge failed',
      task: () => purgeAuditLog(db, config.AUDIT_RETENTION_DAYS, clock.now()),
    }),
  ];
}

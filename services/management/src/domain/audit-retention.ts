import { purgeAuditLog, startPeriodic, type Platform, type Worker } from '@intake/shared';

/** Deletes audit entries older than AUDIT_RETENTION_DAYS every `intervalMs` (the only delete the table allows). */
export function startAuditRetention(
  platform: Pick<Platform, 'db' | 'logger' | 'clock' | 'config'>,
  intervalMs = 60 * 60_000,
): Worker {
  return startPeriodic({
    intervalMs,
    logger: platform.logger,
    failure: 'audit log retention purge failed',
    task: () => purgeAuditLog(platform.db, platform.config.AUDIT_RETENTION_DAYS, platform.clock.now()),
  });
}

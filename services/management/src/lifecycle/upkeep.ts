import { sweepSessions } from '@intake/shared/auth';
import { purgeAuditLog } from '@intake/shared/audit';
import { startPeriodic, type Platform, type Worker } from '@intake/shared/runtime';
import { sealChatUrlsInTheClear } from '../webhooks/chat-urls';

/**
 * The console's periodic upkeep: ended console sessions go every 10 minutes (they are also refused and removed when
 * next used), audit entries older than AUDIT_RETENTION_DAYS every hour (the only delete that table allows), and chat
 * webhook URLs still stored in the clear are sealed at start and every 10 minutes (chat-urls.ts).
 */
export function startUpkeep(platform: Pick<Platform, 'db' | 'logger' | 'clock' | 'config' | 'secrets'>): Worker[] {
  const { db, logger, clock, config, secrets } = platform;
  const sealChatUrls = () =>
    sealChatUrlsInTheClear(db, secrets).then((sealed) => {
      if (sealed > 0) logger.info({ sealed }, 'chat webhook URLs sealed');
    });
  const first = sealChatUrls().catch((err) => logger.warn({ err }, 'sealing chat webhook URLs failed'));
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
    startPeriodic({ intervalMs: 10 * 60_000, logger, failure: 'sealing chat webhook URLs failed', task: sealChatUrls }),
    { stop: async () => void (await first) },
  ];
}

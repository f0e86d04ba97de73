import { createMailer } from '@intake/shared/base';
import { type Platform, type ServiceModule, type Worker } from '@intake/shared/runtime';
import { startUsageConsumer, type UsageConsumerOptions } from './consumers/submission-events.consumer';
import { startQuotaMailRetry } from './consumers/quota-mail.worker';
import { usageRoutes } from './routes/usage.routes';

export { recordSubmissionEvents, USAGE_CONSUMER } from './domain/record-event';
export { reachedThresholds, quotaWarningKey, sendQuotaWarnings, QUOTA_THRESHOLDS } from './domain/quota-warnings';
export { usageReport } from './domain/usage-report';
export { ensureUsageConsumer } from './consumers/submission-events.consumer';

export interface UsageWorkerOptions extends UsageConsumerOptions {
  /** How often quota warnings that could not be sent are retried. */
  mailRetryMs?: number;
}

/** The usage consumer and the quota-warning retry timer; options shorten the schedules in tests. */
export async function startUsageWorkers(platform: Platform, options: UsageWorkerOptions = {}): Promise<Worker[]> {
  const mailer = createMailer(platform.config, platform.logger);
  const consumer = await startUsageConsumer(platform, mailer, options);
  const retry = startQuotaMailRetry(platform, mailer, options.mailRetryMs ?? 60_000);
  return [
    {
      async stop() {
        await Promise.allSettled([consumer.stop(), retry.stop()]);
        mailer.close();
      },
    },
  ];
}

/** The usage service: counts submission events per account, form and UTC day; serves GET /v1/usage; warns at 80% and 100% of the quota. */
export const usageService: ServiceModule<Platform> = {
  name: 'usage',
  publishesEvents: false,
  cors: false,
  routes: () => usageRoutes,
  compose: (platform) => platform,
  startWorkers: (platform) => startUsageWorkers(platform),
};

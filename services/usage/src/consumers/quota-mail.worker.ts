import type { Mailer } from '@intake/shared/base';
import type { Platform, Worker } from '@intake/shared/runtime';
import { sendQuotaWarnings } from '../domain/quota-warnings';

/** Retries quota warnings that could not be sent right away (SMTP down), every `intervalMs`. */
export function startQuotaMailRetry(platform: Platform, mailer: Mailer, intervalMs: number): Worker {
  const { db, logger, clock, config } = platform;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const tick = (): void => {
    timer = setTimeout(() => {
      running = sendQuotaWarnings({ db, mailer, logger, publicBaseUrl: config.PUBLIC_BASE_URL, now: () => clock.now() })
        .catch((err) => logger.warn({ err }, 'quota warning retry failed'))
        .finally(() => {
          if (!stopped) tick();
        });
    }, intervalMs);
  };
  tick();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

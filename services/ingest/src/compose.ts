import { subscribeFormChanges, type Platform } from '@intake/shared';
import { createRateLimiter, type IngestRateLimiter } from './rules/rate-limit';
import { createFormCache, type FormCache } from './storing/form-cache';
import { createGroupWriter, type GroupWriter } from './storing/group-writer';
import { UnsettledFiles } from './storing/unsettled-files';

/** What one ingest process keeps between posts, made once where the service is composed and passed to what uses it. */
export interface IngestDeps {
  platform: Platform;
  limiter: IngestRateLimiter;
  formCache: FormCache;
  writer: GroupWriter;
  unsettled: UnsettledFiles;
  /** The subscription to management's form-change notices that keeps `formCache` current. */
  formChanges: { stop(): void };
}

export function composeIngest(platform: Platform): IngestDeps {
  const formCache = createFormCache({ db: platform.db, ttlMs: platform.config.FORM_CACHE_MS });
  return {
    platform,
    limiter: createRateLimiter(platform),
    formCache,
    writer: createGroupWriter({ db: platform.db, formCache }),
    unsettled: new UnsettledFiles(platform),
    formChanges: followFormChanges(platform, formCache),
  };
}

/**
 * Drops a form's cached copy as soon as management announces a change to it; after a NATS
 * reconnection (notices sent meanwhile are lost) drops every copy.
 */
function followFormChanges(platform: Platform, formCache: FormCache): { stop(): void } {
  const subscription = subscribeFormChanges(platform.nats, (change) => formCache.forget(change));
  let stopped = false;
  void (async () => {
    for await (const status of platform.nats.nc.status()) {
      if (stopped) break;
      if (status.type === 'reconnect') formCache.clear();
    }
  })().catch(() => undefined);
  return {
    stop() {
      stopped = true;
      subscription.stop();
    },
  };
}

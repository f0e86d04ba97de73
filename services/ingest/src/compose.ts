import type { Platform } from '@intake/shared';
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
}

export function composeIngest(platform: Platform): IngestDeps {
  const formCache = createFormCache({ db: platform.db, ttlMs: platform.config.FORM_CACHE_MS });
  return {
    platform,
    limiter: createRateLimiter(platform),
    formCache,
    writer: createGroupWriter({ db: platform.db, formCache }),
    unsettled: new UnsettledFiles(platform),
  };
}

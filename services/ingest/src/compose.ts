import { startOutbox, subscribeFormChanges, type Outbox } from '@intake/shared/messaging';
import { type Platform } from '@intake/shared/runtime';
import { createRateLimiter, type IngestRateLimiter } from './judge/gate';
import { createFormCache, type FormCache } from './read/form-cache';
import { createGroupWriter, type GroupWriter } from './store/group-writer';
import { createSpamModels, type SpamModels } from './judge/spam-classifier';
import { UnsettledFiles } from './store/unsettled-files';

/** What one ingest process keeps between posts, made once where the service is composed and passed to what uses it. */
export interface IngestDeps {
  platform: Platform;
  limiter: IngestRateLimiter;
  formCache: FormCache;
  /** Each account's spam classifier, trained once and kept until the owner marks a post. */
  spamModels: SpamModels;
  writer: GroupWriter;
  /** Publishes the events of committed groups at once (absent when the outbox relays alone publish them). */
  events: Outbox | undefined;
  unsettled: UnsettledFiles;
  /** The subscription to management's form-change notices that keeps `formCache` current. */
  formChanges: { stop(): void };
}

export interface IngestOptions {
  /**
   * Whether ingest publishes the events of the posts it stores itself, right after their commit
   * (default), or leaves them to the outbox relays (tests that look at the outbox rows).
   */
  publishAfterCommit?: boolean;
}

export function composeIngest(platform: Platform, options: IngestOptions = {}): IngestDeps {
  const formCache = createFormCache({ db: platform.db, ttlMs: platform.config.FORM_CACHE_MS });
  const spamModels = createSpamModels({ db: platform.db });
  const events =
    options.publishAfterCommit === false
      ? undefined
      : startOutbox({ db: platform.db, nats: platform.nats, logger: platform.logger });
  return {
    platform,
    limiter: createRateLimiter(platform),
    formCache,
    spamModels,
    writer: createGroupWriter({ db: platform.db, formCache, events }),
    events,
    unsettled: new UnsettledFiles(platform),
    formChanges: followFormChanges(platform, formCache, spamModels),
  };
}

/**
 * Drops a form's cached copy as soon as management announces a change to it (and its account's
 * spam model when the change is a mark); after a NATS reconnection, or on a new connection that
 * replaces one closed for good (notices sent meanwhile are lost), drops every copy.
 */
function followFormChanges(platform: Platform, formCache: FormCache, spamModels: SpamModels): { stop(): void } {
  let stopped = false;
  const forgetAll = (): void => {
    formCache.clear();
    spamModels.clear();
  };
  // From the first connection on: before it, nothing can be announced, and the cache's time limit covers the rest.
  const subscription = subscribeFormChanges(platform.nats, (change) => {
    formCache.forget(change);
    if (change.account_id !== undefined) spamModels.forget(change.account_id);
  });
  const stopWatching = platform.nats.eachConnection((nc, replacement) => {
    if (replacement) forgetAll();
    void (async () => {
      for await (const status of nc.status()) {
        if (stopped) break;
        if (status.type === 'reconnect') forgetAll();
      }
    })().catch(() => undefined);
  });
  return {
    stop() {
      stopped = true;
      stopWatching();
      subscription.stop();
    },
  };
}

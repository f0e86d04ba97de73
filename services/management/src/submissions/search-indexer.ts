import { type Queryable } from '@intake/shared/base';
import { startPeriodic, type Platform, type Worker } from '@intake/shared/runtime';
import { indexSearchBacklog } from './search.repository';

/** Submissions indexed per transaction: about 30 ms of keys on the 2-core box, short enough not to hold a purge. */
export const SEARCH_BATCH = 500;

/** Indexes the whole search backlog, a batch at a time, until a batch comes back short. Returns rows taken. */
export async function drainSearchBacklog(db: Queryable, batch = SEARCH_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const taken = await indexSearchBacklog(db, batch);
    total += taken;
    if (taken < batch) return total;
  }
}

/** How often the indexer looks for new rows: a submission is in the index about this long after its commit. */
export const SEARCH_INDEX_INTERVAL_MS = 250;

/**
 * The search indexer (migration 024): every `intervalMs` it drains the backlog ingest's
 * inserts leave, so searches read the backlog's few rows one by one and everything else through the index. Any number
 * of replicas may run it: each takes rows the others do not hold.
 */
export function startSearchIndexer(platform: Pick<Platform, 'db' | 'logger'> & { intervalMs?: number }): Worker {
  return startPeriodic({
    intervalMs: platform.intervalMs ?? SEARCH_INDEX_INTERVAL_MS,
    logger: platform.logger,
    failure: 'search indexing failed; will retry',
    task: () => drainSearchBacklog(platform.db),
  });
}

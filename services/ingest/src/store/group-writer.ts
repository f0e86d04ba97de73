import { context, trace, type SpanContext } from '@opentelemetry/api';
import { isForeignKeyViolation, isStatementError, type Db, BatchQueue } from '@intake/shared/base';
import { problem } from '@intake/shared/contracts';
import { inActiveSpan } from '@intake/shared/telemetry';
import { type Outbox } from '@intake/shared/messaging';
import {
  preparePost,
  QUOTA_EXCEEDED_SQLSTATE,
  storeSubmissions,
  type GroupResult,
  type PostToStore,
  type PreparedPost,
} from '@intake/shared/submissions';
import { quotaExceeded } from '../judge/gate';
import type { FormCache } from '../read/form-cache';

export type StoreOutcome = 'stored' | 'lost-idempotency-race';

export interface GroupWriter {
  /**
   * Stores an accepted post: its submission, files, outbox event and idempotency claim, and (when
   * received, not spam) its quota unit, in one transaction, so nothing is ever half-stored or
   * counted without its submission. Each post gets its own answer: stored, lost its idempotency
   * claim, over quota (402), or its form deleted (404).
   */
  store(post: PostToStore): Promise<StoreOutcome>;
}

interface Pending extends PreparedPost {
  /** The request's span: the group's span links to it. */
  span: SpanContext | undefined;
}

/**
 * Per process: at most 64 posts and 4 MiB of them per transaction (a larger post goes alone), and
 * one transaction in flight, a second only when the first has run for 20 ms (held by a lock, a
 * slow disk): one at a time made groups twice as large and cost Postgres a quarter less per post
 * (docs/performance.md). Postgres waits at most 5 s for a lock inside one (the
 * function sets lock_timeout; then the group is answered 503), so posts never queue long behind
 * a locked row.
 */
const GROUP = { maxPosts: 64, maxBytes: 4 * 1024 * 1024, maxInFlight: 2, spareAfterMs: 20 };

/**
 * Posts that arrive while this process's previous stores are in flight are stored together in the
 * next transaction (`BatchQueue`: one round trip and one WAL flush for the group; a quiet service
 * stores each post alone, at once). A post its account's quota cannot take marks that account used
 * up in `formCache`. The events of a committed group are published by `events` when given (from
 * memory, at once), else left to the outbox relays.
 */
export function createGroupWriter(props: { db: Db; formCache: FormCache; events?: Outbox }): GroupWriter {
  const queue = new BatchQueue<Pending, StoreOutcome>((group) => writeGroup(props, group), {
    maxGroup: GROUP.maxPosts,
    maxInFlight: GROUP.maxInFlight,
    spareAfterMs: GROUP.spareAfterMs,
    weigh: (p) => p.bytes,
    maxWeight: GROUP.maxBytes,
  });
  return {
    store: (post) => {
      const { item, json, bytes, event } = preparePost(post);
      return queue.push({ item, json, bytes, event, span: trace.getSpanContext(context.active()) });
    },
  };
}

const tracer = trace.getTracer('intake-ingest');

/**
 * Stores a group in one transaction. A group its quota cannot take is written again admitting
 * posts in order while units remain; a group Postgres refuses as a whole (a value it cannot take,
 * a race with a deletion, a deadlock) is written post by post, one at a time, so one bad post fails
 * alone without flooding the pool. Errors of the connection or the server, and a lock time-out,
 * fail the whole group (503).
 */
async function writeGroup(
  deps: { db: Db; formCache: FormCache; events?: Outbox },
  group: Pending[],
): Promise<PromiseSettledResult<StoreOutcome>[]> {
  let result: GroupResult;
  try {
    result = await inGroupSpan(group, async () => {
      try {
        return await storeSubmissions(deps.db, group, false);
      } catch (err) {
        if ((err as { code?: string }).code !== QUOTA_EXCEEDED_SQLSTATE) throw err;
        return storeSubmissions(deps.db, group, true);
      }
    });
  } catch (err) {
    if (group.length === 1) return [{ status: 'rejected', reason: isForeignKeyViolation(err) ? formGone() : err }];
    if (!isStatementError(err)) throw err;
    const results: PromiseSettledResult<StoreOutcome>[] = [];
    for (const pending of group) results.push(...(await writeGroup(deps, [pending])));
    return results;
  }
  const unstored = new Set([...result.lost, ...result.gone, ...result.refused]);
  deps.events?.publish(group.flatMap(({ event }, n) => (unstored.has(n) ? [] : [event])));
  return group.map(({ item }, n): PromiseSettledResult<StoreOutcome> => {
    if (result.lost.includes(n)) return { status: 'fulfilled', value: 'lost-idempotency-race' };
    if (result.gone.includes(n)) return { status: 'rejected', reason: formGone() };
    if (result.refused.includes(n)) {
      deps.formCache.usedUp(item.row.account_id, item.period);
      return { status: 'rejected', reason: quotaExceeded(item.quota) };
    }
    return { status: 'fulfilled', value: 'stored' };
  });
}

/** The form (or its account) was deleted after ingest read it (it is cached briefly): as if it never existed. */
function formGone() {
  return problem('form-not-found', 'The form no longer exists');
}

/** A group's write gets a trace of its own, linked to the trace of every post in it. */
function inGroupSpan<T>(group: Pending[], write: () => Promise<T>): Promise<T> {
  const links = group.flatMap((p) => (p.span ? [{ context: p.span }] : []));
  return inActiveSpan(
    tracer,
    'ingest store group',
    { root: true, links, attributes: { 'intake.ingest.group_size': group.length } },
    write,
  );
}

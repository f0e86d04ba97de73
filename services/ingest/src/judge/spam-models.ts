import { LRUCache } from 'lru-cache';
import type { Db } from '@intake/shared';
import { trainModel, type SpamModel } from './spam-classifier';

export interface SpamModels {
  /** The account's classifier (undefined: not enough to learn from), trained once and kept until its examples change. */
  get(accountId: string): Promise<SpamModel | undefined>;
  /** Drops the account's model (its owner marked a post): the next post trains it again. */
  forget(accountId: string): void;
  /** Drops every model (after a NATS reconnection, when notices may have been missed). */
  clear(): void;
}

/**
 * The examples a model learns from, newest first: the owner's marks (`spam_examples`, which go with
 * their submissions) and the account's honeypot catches as spam, each kind capped.
 */
const EXAMPLES = `
  (SELECT payload, is_spam FROM spam_examples WHERE account_id = ? AND is_spam ORDER BY marked_at DESC LIMIT ?)
  UNION ALL
  (SELECT payload, is_spam FROM spam_examples WHERE account_id = ? AND NOT is_spam ORDER BY marked_at DESC LIMIT ?)
  UNION ALL
  (SELECT s.payload, true FROM submissions s
    WHERE s.account_id = ? AND s.spam_reason = 'honeypot'
      AND NOT EXISTS (SELECT 1 FROM spam_examples e WHERE e.submission_id = s.id)
    ORDER BY s.received_at DESC LIMIT ?)`;

const LIMITS = { marksPerKind: 2000, honeypotCatches: 500, ttlMs: 10 * 60_000, maxAccounts: 10_000 };

/**
 * Per process, per account (the 10,000 most recently used, lru-cache): a model is trained from the
 * account's examples the first time one of its posts is scored, then kept. Management announces every mark (a form-change notice with the
 * account), and every process drops that model at once; otherwise a model is trained again after
 * 10 minutes, which takes in the honeypot catches since. A training that was under way when a
 * notice came is used by the posts waiting for it but not kept (the notice removed its entry).
 */
export function createSpamModels(props: { db: Db }): SpamModels {
  const entries = new LRUCache<string, Promise<SpamModel | undefined>>({
    max: LIMITS.maxAccounts,
    ttl: LIMITS.ttlMs,
  });
  return {
    get(accountId) {
      const hit = entries.get(accountId);
      if (hit) return hit;
      const model = loadModel(props.db, accountId);
      entries.set(accountId, model);
      // A failed read is not kept: the next post tries again.
      model.catch(() => {
        if (entries.peek(accountId) === model) entries.delete(accountId);
      });
      return model;
    },
    forget(accountId) {
      entries.delete(accountId);
    },
    clear() {
      entries.clear();
    },
  };
}

async function loadModel(db: Db, accountId: string): Promise<SpamModel | undefined> {
  const { rows } = await db.raw<{ rows: { payload: Record<string, string>; is_spam: boolean }[] }>(EXAMPLES, [
    accountId,
    LIMITS.marksPerKind,
    accountId,
    LIMITS.marksPerKind,
    accountId,
    LIMITS.honeypotCatches,
  ]);
  return trainModel(rows.map((r) => ({ payload: r.payload, spam: r.is_spam })));
}

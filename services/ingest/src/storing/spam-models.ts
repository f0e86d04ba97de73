import type { Db } from '@intake/shared';
import { trainModel, type SpamModel } from '../rules/spam-classifier';

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

interface Entry {
  model: Promise<SpamModel | undefined>;
  at: number;
}

/**
 * Per process, per account: a model is trained from the account's examples the first time one of
 * its posts is scored, then kept. Management announces every mark (a form-change notice with the
 * account), and every process drops that model at once; otherwise a model is trained again after
 * 10 minutes, which takes in the honeypot catches since. A training that was under way when a
 * notice came is used by the posts waiting for it but not kept (the generation moved on).
 */
export function createSpamModels(props: { db: Db }): SpamModels {
  const entries = new Map<string, Entry>();
  return {
    get(accountId) {
      const now = Date.now();
      const hit = entries.get(accountId);
      if (hit && now - hit.at < LIMITS.ttlMs) return hit.model;
      if (entries.size >= LIMITS.maxAccounts) entries.clear();
      const entry = { model: loadModel(props.db, accountId), at: now };
      entries.set(accountId, entry);
      // A failed read is not kept: the next post tries again.
      entry.model.catch(() => {
        if (entries.get(accountId) === entry) entries.delete(accountId);
      });
      return entry.model;
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

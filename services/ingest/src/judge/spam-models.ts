import { LRUCache } from 'lru-cache';
import { spamModelForms, spamModelOf, type Db, type SpamModelOf } from '@intake/shared';
import type { IngestForm } from '../read/form.repository';
import { trainModel, type SpamModel } from './spam-classifier';

export interface SpamModels {
  /**
   * The classifier the form uses, its project's or its own (undefined: not enough to learn from), trained once and kept
   * until its examples change.
   */
  get(form: Pick<IngestForm, 'id' | 'account_id' | 'project_id' | 'spam_model'>): Promise<SpamModel | undefined>;
  /** Drops the account's models (its owner marked a post, or moved a form): the next post trains them again. */
  forget(accountId: string): void;
  /** Drops every model (after a NATS reconnection, when notices may have been missed). */
  clear(): void;
}

/**
 * The examples a model learns from, newest first: the owner's marks (`spam_examples`, which go with
 * their submissions) and the honeypot catches as spam, of the forms it is trained for (`FORMS`: a project's that use
 * its model, or one form's), each kind capped.
 */
const EXAMPLES = `
  (SELECT e.payload, e.is_spam FROM spam_examples e JOIN submissions s ON s.id = e.submission_id
    JOIN forms f ON f.id = s.form_id
    WHERE e.account_id = ? AND e.is_spam AND FORMS ORDER BY e.marked_at DESC LIMIT ?)
  UNION ALL
  (SELECT e.payload, e.is_spam FROM spam_examples e JOIN submissions s ON s.id = e.submission_id
    JOIN forms f ON f.id = s.form_id
    WHERE e.account_id = ? AND NOT e.is_spam AND FORMS ORDER BY e.marked_at DESC LIMIT ?)
  UNION ALL
  (SELECT s.payload, true FROM submissions s JOIN forms f ON f.id = s.form_id
    WHERE s.account_id = ? AND s.spam_reason = 'honeypot' AND FORMS
      AND NOT EXISTS (SELECT 1 FROM spam_examples e WHERE e.submission_id = s.id)
    ORDER BY s.received_at DESC LIMIT ?)`;

const LIMITS = { marksPerKind: 2000, honeypotCatches: 500, ttlMs: 10 * 60_000, maxAccounts: 10_000 };

/**
 * Per process, per project or form with its own (the 10,000 most recently used, lru-cache): a model is trained from
 * its forms' examples the first time one of their posts is scored, then kept. Management announces every mark (a form-change notice with the
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
    get(form) {
      const scope = spamModelOf(form);
      const key = `${form.account_id} ${scope.kind} ${scope.id}`;
      const hit = entries.get(key);
      if (hit) return hit;
      const model = loadModel(props.db, form.account_id, scope);
      entries.set(key, model);
      // A failed read is not kept: the next post tries again.
      model.catch(() => {
        if (entries.peek(key) === model) entries.delete(key);
      });
      return model;
    },
    forget(accountId) {
      // Marks are rare next to posts: a walk over the cached models is cheap enough for each.
      for (const key of [...entries.keys()]) if (key.startsWith(`${accountId} `)) entries.delete(key);
    },
    clear() {
      entries.clear();
    },
  };
}

async function loadModel(db: Db, accountId: string, scope: SpamModelOf): Promise<SpamModel | undefined> {
  const [forms, id] = spamModelForms(scope);
  const { rows } = await db.raw<{ rows: { payload: Record<string, string>; is_spam: boolean }[] }>(
    EXAMPLES.replaceAll('FORMS', forms),
    [accountId, id, LIMITS.marksPerKind, accountId, id, LIMITS.marksPerKind, accountId, id, LIMITS.honeypotCatches],
  );
  return trainModel(rows.map((r) => ({ payload: r.payload, spam: r.is_spam })));
}

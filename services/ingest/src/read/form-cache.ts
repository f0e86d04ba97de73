import { LRUCache } from 'lru-cache';
import type { Db } from '@intake/shared/base';
import type { FormChange } from '@intake/shared/messaging';
import { findFormBySlug, type IngestForm } from './form.repository';

export interface FormCache {
  /** The form with its plan limits and the month's usage, at most `ttlMs` old. */
  get(slug: string, period: string): Promise<IngestForm | undefined>;
  /** Records that the account's quota for `period` is used up, so its forms are refused before their bodies are read. */
  usedUp(accountId: string, period: string): void;
  /** Drops the copies of a changed or deleted form (by id, so an old slug goes too, and by its slug). */
  forget(change: FormChange): void;
  /** Drops every copy (after a NATS reconnection, when notices may have been missed). */
  clear(): void;
}

interface Entry {
  form: IngestForm;
  period: string;
}

/**
 * Per process (made by `composeIngest`), per slug, for `ttlMs` (FORM_CACHE_MS), the `maxEntries` most recently used
 * (lru-cache): saves the form + plan + usage query on
 * almost every post. Management announces every change to a form (`forms.changed`), and every
 * process drops its copy at once (`forget`, subscribed in `composeIngest`); `ttlMs` stays as the
 * safety net for a lost notice (a plan change is not announced and still takes up to that long).
 * A read that was under way when a notice came is not cached (the generation moved on), so a copy
 * read before the change cannot outlive the notice. Unknown slugs are not cached (a new form works at once). The cached `used`
 * only serves the early quota check; the exact check is the conditional upsert when storing.
 * Wall-clock time, not `platform.clock`: a test's fixed clock must not make entries immortal.
 */
export function createFormCache(props: { db: Db; ttlMs: number; maxEntries?: number }): FormCache {
  const { db, ttlMs } = props;
  const entries = new LRUCache<string, Entry>({ max: props.maxEntries ?? 10_000, ttl: Math.max(ttlMs, 1) });
  let generation = 0;
  return {
    async get(slug, period) {
      const hit = entries.get(slug);
      if (hit && hit.period === period) return hit.form;
      const readAt = generation;
      const form = await findFormBySlug(db, slug, period);
      if (!form) {
        entries.delete(slug);
        return undefined;
      }
      if (ttlMs > 0 && readAt === generation) entries.set(slug, { form, period });
      return form;
    },
    forget(change) {
      generation++;
      if (change.slug !== undefined) entries.delete(change.slug);
      const stale = [...entries.entries()].filter(([, entry]) => entry.form.id === change.form_id);
      for (const [slug] of stale) entries.delete(slug);
    },
    clear() {
      generation++;
      entries.clear();
    },
    usedUp(accountId, period) {
      for (const entry of entries.values()) {
        if (entry.form.account_id === accountId && entry.period === period)
          entry.form = Object.assign({}, entry.form, { used: entry.form.monthly_quota });
      }
    },
  };
}

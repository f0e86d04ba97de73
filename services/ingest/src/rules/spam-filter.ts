import type { Db } from '@intake/shared';
import type { IngestForm } from '../repositories/form.repository';
import type { SpamModels } from '../storing/spam-models';
import { SPAM_THRESHOLD } from './spam-classifier';
import { postFeatures } from './spam-features';
import { compiledRules, payloadHash } from './spam-rules';

/** What the spam filter makes of a post: the reason that makes it spam (only when `on`), its score and every reason found. */
export interface FilterVerdict {
  spam: string | undefined;
  score: number | null;
  reasons: string[];
  /** Stored on forms that refuse duplicates, for the next posts to compare with. */
  payloadHash?: string;
}

const NOTHING: FilterVerdict = { spam: undefined, score: null, reasons: [] };

/**
 * The rules, the duplicate check and the account's classifier, on a post the honeypot and the bot
 * challenge let through. Everything it finds is recorded; only a form whose filter is `on` makes a
 * post spam by it, and the classifier only once it has enough examples of both kinds (`ready`).
 * Costs a lookup in the cached model and a pass over the fields; the database only when the form
 * refuses duplicates or its account's model is being trained.
 */
export async function filterPost(
  deps: { db: Db; spamModels: SpamModels },
  post: { form: IngestForm; payload: Record<string, string>; now: Date },
): Promise<FilterVerdict> {
  const { form, payload } = post;
  if (form.spam_filter === 'off') return NOTHING;
  const features = postFeatures(payload);
  const rules = compiledRules(form.spam_rules);
  const reasons = rules.check(payload, features);
  let hash: string | undefined;
  if (rules.duplicateWindowMs !== undefined) {
    hash = payloadHash(payload);
    if (await seenWithin(deps.db, form.id, hash, new Date(post.now.getTime() - rules.duplicateWindowMs)))
      reasons.push('duplicate');
  }
  const byRule = reasons[0];
  const model = await deps.spamModels.get(form.account_id);
  const score = model ? model.score(features.tokens) : null;
  const caught = score !== null && score >= SPAM_THRESHOLD;
  if (caught) reasons.push(`classifier:${score.toFixed(2)}`);
  let spam: string | undefined;
  if (form.spam_filter === 'on') spam = byRule ?? (caught && model?.ready ? reasons[reasons.length - 1] : undefined);
  return { spam, score, reasons, payloadHash: hash };
}

/** Whether the form stored a post with these fields since `since` (spam included). */
async function seenWithin(db: Db, formId: string, hash: string, since: Date): Promise<boolean> {
  const { rows } = await db.raw<{ rows: unknown[] }>(
    'SELECT 1 FROM submissions WHERE form_id = ? AND payload_hash = ? AND received_at > ? LIMIT 1',
    [formId, hash, since],
  );
  return rows.length > 0;
}

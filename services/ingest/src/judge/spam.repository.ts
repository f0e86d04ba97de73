import { type Db } from '@intake/shared/base';
import { spamModelForms, type SpamModelOf } from '@intake/shared/contracts';

/** A post a model learns from: its fields, and whether it is spam. */
export interface SpamExampleRow {
  payload: Record<string, string>;
  is_spam: boolean;
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

/** The examples of one model (`scope`): up to `marksPerKind` marks of each kind and `honeypotCatches` catches. */
export async function findSpamExamples(
  db: Db,
  props: { accountId: string; scope: SpamModelOf; marksPerKind: number; honeypotCatches: number },
): Promise<SpamExampleRow[]> {
  const { accountId, marksPerKind, honeypotCatches } = props;
  const [forms, id] = spamModelForms(props.scope);
  const { rows } = await db.raw<{ rows: SpamExampleRow[] }>(EXAMPLES.replaceAll('FORMS', forms), [
    accountId,
    id,
    marksPerKind,
    accountId,
    id,
    marksPerKind,
    accountId,
    id,
    honeypotCatches,
  ]);
  return rows;
}

/** Whether the form stored a post with these fields since `since` (spam included). */
export async function postSeenWithin(db: Db, formId: string, hash: string, since: Date): Promise<boolean> {
  const { rows } = await db.raw<{ rows: unknown[] }>(
    'SELECT 1 FROM submissions WHERE form_id = ? AND payload_hash = ? AND received_at > ? LIMIT 1',
    [formId, hash, since],
  );
  return rows.length > 0;
}

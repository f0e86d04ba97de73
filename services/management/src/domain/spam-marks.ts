import { announceFormChange, type Platform, type Queryable } from '@intake/shared';

/**
 * Records the owner's verdict on a submission as a training example of the account's spam
 * classifier ("spam" or "not spam", the latest mark wins), with a copy of its fields as marked (json, in
 * their posted order); the example goes with its submission. Inside the caller's transaction.
 */
export async function recordSpamMark(
  trx: Queryable,
  props: { accountId: string; id: string; spam: boolean },
): Promise<void> {
  await trx.raw(
    `INSERT INTO spam_examples (submission_id, account_id, is_spam, payload, marked_at)
     SELECT id, account_id, ?, payload, now() FROM submissions WHERE account_id = ? AND id = ?
     ON CONFLICT (submission_id) DO UPDATE SET is_spam = excluded.is_spam, marked_at = excluded.marked_at`,
    [props.spam, props.accountId, props.id],
  );
}

/** After the commit: every ingest process drops the account's model, and the next post trains it with the new mark. */
export function announceSpamMark(
  props: Pick<Platform, 'nats' | 'logger'> & { accountId: string; formId: string },
): void {
  announceFormChange({
    nats: props.nats,
    logger: props.logger,
    change: { form_id: props.formId, account_id: props.accountId },
  });
}

/** How an account's classifier stands: its examples of each kind (the honeypot catches among the spam ones). */
export async function spamModelStats(
  db: Queryable,
  accountId: string,
): Promise<{ spam_examples: number; not_spam_examples: number; honeypot_catches: number }> {
  const { rows } = await db.raw<{ rows: { spam: number; ham: number; honeypot: number }[] }>(
    `SELECT (SELECT count(*) FROM spam_examples WHERE account_id = ? AND is_spam)::int AS spam,
            (SELECT count(*) FROM spam_examples WHERE account_id = ? AND NOT is_spam)::int AS ham,
            (SELECT count(*) FROM submissions WHERE account_id = ? AND spam_reason = 'honeypot')::int AS honeypot`,
    [accountId, accountId, accountId],
  );
  const row = rows[0] ?? { spam: 0, ham: 0, honeypot: 0 };
  return { spam_examples: row.spam, not_spam_examples: row.ham, honeypot_catches: row.honeypot };
}

/** The score as the API and exports give it (a `real` column, kept to the two decimals it was computed with). */
export function spamScoreOf(row: { spam_score: number | null }): number | null {
  return row.spam_score === null ? null : Math.round(row.spam_score * 100) / 100;
}

/** The recorded reasons; a submission stored before the filter recorded them shows its one reason. */
export function spamReasonsOf(row: { spam_reasons: string[] | null; spam_reason: string | null }): string[] {
  return row.spam_reasons ?? (row.spam_reason ? [row.spam_reason] : []);
}

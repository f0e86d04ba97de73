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

/** The score as the API and exports give it (a `real` column, kept to the two decimals it was computed with). */
export function spamScoreOf(row: { spam_score: number | null }): number | null {
  return row.spam_score === null ? null : Math.round(row.spam_score * 100) / 100;
}

/** The recorded reasons; a submission stored before the filter recorded them shows its one reason. */
export function spamReasonsOf(row: { spam_reasons: string[] | null; spam_reason: string | null }): string[] {
  return row.spam_reasons ?? (row.spam_reason ? [row.spam_reason] : []);
}

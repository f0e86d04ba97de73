import { announceFormChange } from '@intake/shared/messaging';
import { type Platform } from '@intake/shared/runtime';

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

import type { Queryable } from '@intake/shared/base';
import type { AutoresponseSettings } from '@intake/shared/contracts';

export type { AutoresponseSettings };

/** A submission's autoresponse as its notification row records it. */
export interface AutoresponseRow {
  status: 'pending' | 'sending' | 'sent' | 'failed' | 'skipped';
  recipients: unknown;
  attempt_count: number;
  last_error: string | null;
  sent_at: Date | null;
}

/** The autoresponse of one of the account's submissions (its dedup key names the submission), if any. */
export async function findAutoresponse(
  db: Queryable,
  accountId: string,
  submissionId: string,
): Promise<AutoresponseRow | undefined> {
  return db('notifications')
    .where({ account_id: accountId, kind: 'autoresponse', dedup_key: `autoresponse:${submissionId}` })
    .first('status', 'recipients', 'attempt_count', 'last_error', 'sent_at');
}

import type { Db } from '../base/db';
import type { SubmissionEvent } from '../contracts/events';

/**
 * The event with its fields, read from the submission when the message went without them; none
 * when that submission has been deleted since (nothing to send). Spam events are returned as they
 * are (nobody sends their fields).
 */
export async function eventWithPayload(db: Db, event: SubmissionEvent): Promise<SubmissionEvent | undefined> {
  if (!event.payload_omitted || event.status !== 'received') return event;
  const row: { payload: Record<string, string> } | undefined = await db('submissions')
    .where({ id: event.submission_id })
    .first('payload');
  return row ? { ...event, payload: row.payload } : undefined;
}

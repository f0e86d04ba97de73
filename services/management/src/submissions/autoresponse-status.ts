import { Type } from '@sinclair/typebox';
import { type Db } from '@intake/shared/base';
import { AutoresponseSettings, toTimestamp } from '@intake/shared/contracts';
import { findAutoresponse } from './autoresponse.repository';
import { Nullable, NullableTimestamp } from '../platform/schemas';

/** A submission's autoresponse, as `GET /v1/submissions/:id` shows it. */
export const AutoresponseStatus = Nullable(
  Type.Object(
    {
      status: Type.Union(
        [
          Type.Literal('pending'),
          Type.Literal('sending'),
          Type.Literal('sent'),
          Type.Literal('failed'),
          Type.Literal('skipped'),
        ],
        { description: '`pending` covers a send to be retried; `skipped`: no address, or one sent there recently' },
      ),
      to: Nullable(Type.String({ description: 'the recipient; null when the submission held no address' })),
      attempt_count: Type.Integer(),
      last_error: Nullable(Type.String({ description: 'why the last send failed, or why it was skipped' })),
      sent_at: NullableTimestamp,
    },
    { description: 'the confirmation mailed to the submitter; null when the form sent none for it' },
  ),
);

/** The submission's autoresponse for the API, or null. */
export async function autoresponseOf(db: Db, accountId: string, submissionId: string) {
  const row = await findAutoresponse(db, accountId, submissionId);
  if (!row) return null;
  const to = Array.isArray(row.recipients) && typeof row.recipients[0] === 'string' ? row.recipients[0] : null;
  return {
    status: row.status,
    to,
    attempt_count: row.attempt_count,
    last_error: row.last_error,
    sent_at: row.sent_at ? toTimestamp(row.sent_at) : null,
  };
}
export { AutoresponseSettings };

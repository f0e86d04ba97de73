import type { SubmissionDetail } from '../api-types';
import { formatTime } from '../time';

const SAID: Record<NonNullable<SubmissionDetail['autoresponse']>['status'], string> = {
  pending: 'waiting to be sent',
  sending: 'being sent',
  sent: 'sent',
  failed: 'failed',
  skipped: 'not sent',
};

/** What became of the confirmation mailed to the submitter: sent to whom and when, or why not. */
export function AutoresponseLine({ autoresponse: a }: { autoresponse: SubmissionDetail['autoresponse'] }) {
  if (!a) return <p class="muted">No autoresponse for this submission.</p>;
  return (
    <p class={a.status === 'failed' ? 'error' : undefined}>
      Autoresponse {SAID[a.status]}
      {a.to ? ` to ${a.to}` : ''}
      {a.sent_at ? ` at ${formatTime(a.sent_at)}` : ''}
      {a.attempt_count > 1 ? ` after ${a.attempt_count} attempts` : ''}
      {a.last_error ? `: ${a.last_error}` : '.'}
    </p>
  );
}

import { newId, type NotificationStatus, type Queryable } from '@intake/shared';

export interface SubmissionNotificationRow {
  id: string;
  status: NotificationStatus;
  attempt_count: number;
}

/** The form's notification addresses (none when the form is gone). */
export async function findNotifyEmails(db: Queryable, accountId: string, formId: string): Promise<string[]> {
  const form: { notify_emails: string[] } | undefined = await db('forms')
    .where({ id: formId, account_id: accountId })
    .first('notify_emails');
  return form?.notify_emails ?? [];
}

/** The notification of one submission, created `pending` the first time (notifications.dedup_key makes it once per submission). */
export async function ensureSubmissionNotification(
  db: Queryable,
  props: { accountId: string; submissionId: string; recipients: string[]; now: Date },
): Promise<SubmissionNotificationRow> {
  const dedupKey = `submission:${props.submissionId}`;
  await db('notifications')
    .insert({
      id: newId('notification', props.now.getTime()),
      account_id: props.accountId,
      kind: 'submission',
      dedup_key: dedupKey,
      recipients: JSON.stringify(props.recipients),
      status: 'pending',
    })
    .onConflict('dedup_key')
    .ignore();
  return db('notifications').where({ dedup_key: dedupKey }).first('id', 'status', 'attempt_count');
}

export async function updateNotification(
  db: Queryable,
  id: string,
  changes: {
    status: SubmissionNotificationRow['status'];
    attemptCount: number;
    lastError: string | null;
    sentAt?: Date;
  },
): Promise<void> {
  await db('notifications')
    .where({ id })
    .update({
      status: changes.status,
      attempt_count: changes.attemptCount,
      last_error: changes.lastError,
      lease_until: null, // the send is over: its lease ends
      ...(changes.sentAt ? { sent_at: changes.sentAt } : {}),
    });
}

import type { Knex } from 'knex';
import { type Db, type Queryable } from '@intake/shared/base';
import { newId } from '@intake/shared/contracts';
import { claimNotifications, type ClaimedNotification } from '@intake/shared/schema';

/** A day: a digest covers whole days from where the last one ended. */
export const DAY_MS = 86_400_000;

export type DigestRow = ClaimedNotification<'digest'>;

/** A digest's form and window, from its key (`digest:<form id>:<start ms>-<end ms>`). */
export function digestKey(formId: string, start: Date, end: Date): string {
  return `digest:${formId}:${start.getTime()}-${end.getTime()}`;
}

export function parseDigestKey(key: string): { formId: string; start: Date; end: Date } {
  const [, formId = '', window = ''] = key.split(':');
  const [start = 0, end = 0] = window.split('-').map(Number);
  return { formId, start: new Date(start), end: new Date(end) };
}

/**
 * Queues the digests that are due: of each daily form whose last digest ended a day or more before `now` (rows held
 * by another process are skipped), a `digest` notification for the whole days since (its key names the window, so it
 * is queued once), and the form's `digest_through` moved to the window's end, in one transaction. A form without
 * addresses queues it `skipped`. Returns how many were queued.
 */
export async function queueDueDigests(db: Db, props: { now: Date; limit: number }): Promise<number> {
  return db.transaction(async (trx) => {
    const due: { id: string; account_id: string; notify_emails: unknown; digest_through: Date }[] = await trx('forms')
      .where({ notification_schedule: 'daily' })
      .andWhere('digest_through', '<=', new Date(props.now.getTime() - DAY_MS))
      .orderBy('digest_through')
      .limit(props.limit)
      .forUpdate()
      .skipLocked()
      .select('id', 'account_id', 'notify_emails', 'digest_through');
    for (const form of due) {
      const days = Math.floor((props.now.getTime() - form.digest_through.getTime()) / DAY_MS);
      const end = new Date(form.digest_through.getTime() + days * DAY_MS);
      const recipients = Array.isArray(form.notify_emails)
        ? form.notify_emails.filter((a): a is string => typeof a === 'string')
        : [];
      await trx('notifications')
        .insert({
          id: newId('notification', props.now.getTime()),
          account_id: form.account_id,
          kind: 'digest',
          dedup_key: digestKey(form.id, form.digest_through, end),
          recipients: JSON.stringify(recipients),
          status: recipients.length ? 'pending' : 'skipped',
          last_error: recipients.length ? null : 'the form has no notification addresses',
          created_at: props.now,
        })
        .onConflict('dedup_key')
        .ignore();
      await trx('forms').where({ id: form.id }).update({ digest_through: end });
    }
    return due.length;
  });
}

/** Claims digests to send (shared's claimNotifications: pending ones, and ones whose sender stopped mid-send). */
export function claimDigests(
  trx: Knex.Transaction,
  options: { limit: number; now: Date; staleBefore: Date },
): Promise<DigestRow[]> {
  return claimNotifications(trx, { kinds: ['digest'], ...options });
}

export interface DigestContents {
  formName: string;
  count: number;
  /** The newest of the window's received submissions, newest first. */
  newest: { id: string; received_at: Date; payload: Record<string, string> }[];
}

/** What a digest says: the form's received submissions in its window (`end` excluded); undefined when the form is gone. */
export async function digestContents(
  db: Queryable,
  props: { formId: string; start: Date; end: Date; listed: number },
): Promise<DigestContents | undefined> {
  const form: { name: string } | undefined = await db('forms').where({ id: props.formId }).first('name');
  if (!form) return undefined;
  const inWindow = () =>
    db('submissions')
      .where({ form_id: props.formId, status: 'received' })
      .andWhere('received_at', '>=', props.start)
      .andWhere('received_at', '<', props.end);
  const counted = (await inWindow().count('* as n').first()) as { n: string } | undefined;
  const newest = await inWindow()
    .orderBy([
      { column: 'received_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(props.listed)
    .select('id', 'received_at', 'payload');
  return { formName: form.name, count: Number(counted?.n ?? 0), newest };
}

/**
 * Records a claimed digest's outcome (only while it is still this sender's claim), and the recipients it has reached
 * so far (`sentTo`: a later attempt sends to the others only).
 */
export async function recordDigest(
  db: Queryable,
  id: string,
  outcome: { status: 'sent'; at: Date } | { status: 'pending' | 'failed' | 'skipped'; error: string },
  sentTo?: string[],
): Promise<void> {
  await db('notifications')
    .where({ id, status: 'sending' })
    .update({
      ...(outcome.status === 'sent'
        ? { status: 'sent', sent_at: outcome.at, last_error: null }
        : { status: outcome.status, last_error: outcome.error.slice(0, 1000) }),
      // not a payload: a list of addresses
      ...(sentTo ? { sent_to: JSON.stringify(sentTo) } : {}),
    });
}

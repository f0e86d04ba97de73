import { buildSubmissionCreatedEvent, periodKey, problem } from '@intake/shared/contracts';
import { enqueueEvent } from '@intake/shared/messaging';
import { countReceived } from '@intake/shared/submissions';
import { type Platform } from '@intake/shared/runtime';
import {
  restoreSubmissionRows,
  trashSubmissionRow,
  findSubmission,
  findSubmissionFiles,
  countOrEstimate,
  listSubmissionsPage,
  updateSubmissionRead,
  updateSubmissionStatus,
  type Order,
  type FileRow,
  type Position,
  type SubmissionFilter,
  type SubmissionRow,
  type SubmissionStatus,
} from './submission.repository';
import { trashedBefore } from '../lifecycle/purge';
import { findForm } from './form.repository';
import type { Audit } from '../platform/audit-trail';
import { getForm } from './forms';
import { announceSpamMark } from './spam-marks';
import { moveMarkedUsage, recordSpamMark } from './spam.repository';
import { decodeCursor as decodeAt, encodeCursor as encodeAt } from '../platform/cursor';

type Deps = Pick<Platform, 'db' | 'clock' | 'blobs' | 'logger'>;

/** Set on a received submission that its owner moved to spam, so moving it back does not count or fire it twice. */
export const MARKED_BY_OWNER = 'marked-by-owner';

/** Cursors are opaque to clients: base64url of the last row's position. */
export function encodeCursor(row: { received_at: Date; id: string }): string {
  return encodeAt(row.received_at, row.id);
}

export function decodeCursor(cursor: string): Position {
  const { at, id } = decodeAt(cursor, 'submission');
  return { receivedAt: at, id };
}

type ListProps = Pick<Deps, 'db'> &
  SubmissionFilter & { limit: number; cursor?: string; order?: Order; withTotal?: boolean };

/**
 * One page of a form's submissions in `order` (newest first by default), with the cursors of the next and the
 * previous page and, with `withTotal`, how many the filter matches: exact up to EXACT_COUNT_UP_TO, beyond it the
 * planner's estimate (`total.exact` false), as an exact count of a large form reads every row it counts.
 */
export async function listSubmissions(props: ListProps): Promise<{
  rows: SubmissionRow[];
  nextCursor: string | null;
  prevCursor: string | null;
  total?: { count: number; exact: boolean };
}> {
  const { db, limit, cursor, order = 'desc', withTotal, ...filter } = props;
  const after = cursor ? decodeCursor(cursor) : undefined;
  await getForm({ db, accountId: filter.accountId, id: filter.formId });
  const rows = await listSubmissionsPage(db, { ...filter, order, after, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor = rows.length > limit && last ? encodeCursor(last) : null;
  const prevCursor = after ? await previousCursor(db, filter, order, limit, page[0] ?? after) : null;
  const total = withTotal ? await countOrEstimate(db, filter) : undefined;
  return { rows: page, nextCursor, prevCursor, total };
}

/**
 * The cursor of the page before the one that starts at `first`: the rows just before it, read backwards; the
 * row past them is that page's cursor, and none past them means it is the first page (an empty cursor).
 */
async function previousCursor(
  db: Deps['db'],
  filter: SubmissionFilter,
  order: Order,
  limit: number,
  first: SubmissionRow | Position,
): Promise<string> {
  const at = 'receivedAt' in first ? first : { receivedAt: first.received_at, id: first.id };
  const back = order === 'desc' ? 'asc' : 'desc';
  // A cursor whose row is gone (the page is empty) still has its own row's position on the page before.
  const inclusive = !('received_at' in first);
  const rows = await listSubmissionsPage(db, { ...filter, order: back, after: at, inclusive, limit: limit + 1 });
  const beyond = rows[limit];
  return beyond ? encodeCursor(beyond) : '';
}

/** Marks a submission read or unread for the owner. */
export async function setSubmissionRead(
  props: Pick<Deps, 'db' | 'clock'> & { accountId: string; id: string; read: boolean },
): Promise<SubmissionRow> {
  const { db, clock, accountId, id, read } = props;
  const row = await updateSubmissionRead(db, accountId, id, read ? clock.now() : null);
  if (!row) throw problem('not-found', `No submission ${id}`);
  return row; // whether the owner has read a submission is theirs, not the audit log's
}

export async function getSubmission(
  props: Pick<Deps, 'db'> & { accountId: string; id: string },
): Promise<{ submission: SubmissionRow; files: FileRow[] }> {
  const submission = await findSubmission(props.db, props.accountId, props.id);
  if (!submission) throw problem('not-found', `No submission ${props.id}`);
  return { submission, files: await findSubmissionFiles(props.db, props.accountId, props.id) };
}

/** Deletes a submission and then its stored files. */
export async function deleteSubmission(props: Deps & { audit: Audit; accountId: string; id: string }): Promise<void> {
  const { db, accountId, id } = props;
  await db.transaction(async (trx) => {
    const row = await findSubmission(trx, accountId, id, { forUpdate: true });
    if (!row || !(await trashSubmissionRow(trx, accountId, id, props.clock.now())))
      throw problem('not-found', `No submission ${id}`);
    await props.audit.record(trx, {
      action: 'submission.deleted',
      target: { type: 'submission', id },
      details: { trash: true },
    });
  });
}

/**
 * Takes these of the account's submissions out of the trash (a submission of a form that is itself in the trash comes
 * back with the form); returns the ids restored and those not in the account's trash.
 */
export async function restoreSubmissions(
  props: Pick<Deps, 'db' | 'clock'> & { audit: Audit; accountId: string; ids: string[]; trashDays: number },
): Promise<{ done: string[]; notFound: string[] }> {
  const { db, accountId, ids } = props;
  // Past TRASH_DAYS it is deleted for good, whether or not the purge has reached it yet.
  const trashedSince = trashedBefore(props.clock.now(), props.trashDays);
  return db.transaction(async (trx) => {
    const done = await restoreSubmissionRows(trx, accountId, ids, trashedSince);
    const restored = new Set(done);
    await props.audit.record(
      trx,
      ...done.map((id) => ({ action: 'submission.restored' as const, target: { type: 'submission', id } })),
    );
    return { done: ids.filter((id) => restored.has(id)), notFound: ids.filter((id) => !restored.has(id)) };
  });
}

/**
 * Moves a submission between `spam` and `received`.
 * spam → received (caught by the spam layer): counts it in its month's usage (`countReceived`, as
 * ingest's store counts its posts) and enqueues
 * `submission.created` in the same transaction, so webhooks and e-mail fire now.
 * received → spam: a label only (it stays counted; deliveries already made stay made); moving
 * it back restores it without counting or firing a second time. Either way the day's and month's received and spam
 * figures follow the mark (`moveMarkedUsage`).
 * Either way the mark teaches the account's spam classifier (`recordSpamMark`); given NATS, every
 * ingest process is told after the commit.
 */
export async function setSubmissionStatus(
  props: Pick<Deps, 'db'> &
    Partial<Pick<Platform, 'nats' | 'logger'>> & {
      audit: Audit;
      accountId: string;
      id: string;
      status: SubmissionStatus;
    },
): Promise<SubmissionRow> {
  const { db, accountId, id, status } = props;
  const marked = await db.transaction(async (trx) => {
    const row = await findSubmission(trx, accountId, id, { forUpdate: true });
    if (!row) throw problem('not-found', `No submission ${id}`);
    // Every mark, a repeated one too, is an example for the account's spam classifier.
    await recordSpamMark(trx, { accountId, id, spam: status === 'spam' });
    const target = { type: 'submission', id };
    await props.audit.record(trx, { action: 'submission.status_changed', target, details: { status } });
    if (row.status === status) return row;
    const usage = { accountId, formId: row.form_id, receivedAt: row.received_at };
    if (status === 'spam') {
      await moveMarkedUsage(trx, { ...usage, received: -1, spam: 1 });
      return updateSubmissionStatus(trx, accountId, id, 'spam', MARKED_BY_OWNER);
    }
    const updated = await updateSubmissionStatus(trx, accountId, id, 'received', null);
    // Back from the owner's own mark it moves back; a rescue's created event counts it received (usage's consumer).
    const back = row.spam_reason === MARKED_BY_OWNER;
    await moveMarkedUsage(trx, { ...usage, received: back ? 1 : 0, spam: -1 });
    if (back) return updated;
    await countReceived(trx, { accountId, period: periodKey(row.received_at) });
    const form = await findForm(trx, accountId, row.form_id);
    const files = await findSubmissionFiles(trx, accountId, id);
    await enqueueEvent(trx, buildSubmissionCreatedEvent({ submission: updated, files, formName: form?.name ?? '' }));
    return updated;
  });
  if (props.nats && props.logger)
    announceSpamMark({ nats: props.nats, logger: props.logger, accountId, formId: marked.form_id });
  return marked;
}

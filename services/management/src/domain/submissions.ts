import {
  buildSubmissionCreatedEvent,
  countReceived,
  enqueueEvent,
  periodKey,
  problem,
  type Platform,
} from '@intake/shared';
import {
  deleteSubmissionRow,
  findSubmission,
  findSubmissionFiles,
  listSubmissionsPage,
  updateSubmissionStatus,
  type FileRow,
  type Position,
  type SubmissionFilter,
  type SubmissionRow,
  type SubmissionStatus,
} from '../repositories/submission.repository';
import { findForm } from '../repositories/form.repository';
import { getForm, removeBlobs } from './forms';
import { decodeCursor as decodeAt, encodeCursor as encodeAt } from './cursor';

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

/** One page of a form's submissions, newest first. */
export async function listSubmissions(
  props: Pick<Deps, 'db'> & Omit<SubmissionFilter, 'formId'> & { formId: string; limit: number; cursor?: string },
): Promise<{ rows: SubmissionRow[]; nextCursor: string | null }> {
  const { db, limit, cursor, ...filter } = props;
  const after = cursor ? decodeCursor(cursor) : undefined;
  await getForm({ db, accountId: filter.accountId, id: filter.formId });
  const rows = await listSubmissionsPage(db, { ...filter, after, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}

export async function getSubmission(
  props: Pick<Deps, 'db'> & { accountId: string; id: string },
): Promise<{ submission: SubmissionRow; files: FileRow[] }> {
  const submission = await findSubmission(props.db, props.accountId, props.id);
  if (!submission) throw problem('not-found', `No submission ${props.id}`);
  return { submission, files: await findSubmissionFiles(props.db, props.accountId, props.id) };
}

/** Deletes a submission and then its stored files. */
export async function deleteSubmission(props: Deps & { accountId: string; id: string }): Promise<void> {
  const { db, accountId, id } = props;
  const keys = await db.transaction(async (trx) => {
    const row = await findSubmission(trx, accountId, id, { forUpdate: true });
    if (!row) throw problem('not-found', `No submission ${id}`);
    const files = await findSubmissionFiles(trx, accountId, id);
    await deleteSubmissionRow(trx, accountId, id);
    return files.map((f) => f.storage_key);
  });
  await removeBlobs({ ...props, keys });
}

/**
 * Moves a submission between `spam` and `received`.
 * spam → received (caught by the spam layer): counts it in its month's usage (`countReceived`, as
 * ingest's store counts its posts) and enqueues
 * `submission.created` in the same transaction, so webhooks and e-mail fire now.
 * received → spam: a label only (it stays counted; deliveries already made stay made); moving
 * it back restores it without counting or firing a second time.
 */
export async function setSubmissionStatus(
  props: Pick<Deps, 'db'> & { accountId: string; id: string; status: SubmissionStatus },
): Promise<SubmissionRow> {
  const { db, accountId, id, status } = props;
  return db.transaction(async (trx) => {
    const row = await findSubmission(trx, accountId, id, { forUpdate: true });
    if (!row) throw problem('not-found', `No submission ${id}`);
    if (row.status === status) return row;
    if (status === 'spam') return updateSubmissionStatus(trx, accountId, id, 'spam', MARKED_BY_OWNER);
    const updated = await updateSubmissionStatus(trx, accountId, id, 'received', null);
    if (row.spam_reason === MARKED_BY_OWNER) return updated;
    await countReceived(trx, { accountId, period: periodKey(row.received_at) });
    const form = await findForm(trx, accountId, row.form_id);
    const files = await findSubmissionFiles(trx, accountId, id);
    await enqueueEvent(trx, buildSubmissionCreatedEvent({ submission: updated, files, formName: form?.name ?? '' }));
    return updated;
  });
}

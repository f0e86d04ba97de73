import { problem } from '@intake/shared/contracts';
import { type Platform } from '@intake/shared/runtime';
import { decodeCursor, encodeCursor } from '../platform/cursor';
import type { Audit } from '../platform/audit-trail';
import { trashedBefore } from '../lifecycle/purge';
import { deleteSubmissionsOfForm, findFileKeys } from '../lifecycle/purge.repository';
import { getForm, removeBlobs } from './forms';
import {
  lockSubmissionForGood,
  pageOfTrashedSubmissions,
  type TrashedSubmissionRow,
} from './submission-trash.repository';

/**
 * One page of the account's submission trash (or one form's, or its projects'), most recently deleted first, with
 * the cursor of the next page.
 */
export async function listSubmissionTrash(
  props: Pick<Platform, 'db' | 'clock'> & {
    accountId: string;
    trashDays: number;
    formId?: string;
    projects: string[] | null;
    limit: number;
    cursor?: string;
  },
): Promise<{ rows: TrashedSubmissionRow[]; nextCursor: string | null }> {
  const after = props.cursor ? decodeCursor(props.cursor, 'submission') : undefined;
  // 404 for a form that is not the account's, or is in the trash itself.
  if (props.formId) await getForm({ db: props.db, accountId: props.accountId, id: props.formId });
  const rows = await pageOfTrashedSubmissions(props.db, {
    accountId: props.accountId,
    trashedSince: trashedBefore(props.clock.now(), props.trashDays),
    formId: props.formId,
    projects: props.projects,
    after,
    limit: props.limit + 1,
  });
  const page = rows.slice(0, props.limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > props.limit && last ? encodeCursor(last.deleted_at, last.id) : null };
}

/**
 * Deletes a submission for good, now, in the trash or not: its deliveries, mail rows, idempotency key, spam example
 * and file rows with it (as the purge does), then its stored files. 404 when the account has no such submission, or
 * its form is in the trash (it is deleted with its form).
 */
export async function deleteSubmissionForGood(
  props: Pick<Platform, 'db' | 'blobs' | 'logger'> & { audit: Audit; accountId: string; id: string },
): Promise<void> {
  const { db, accountId, id } = props;
  const keys = await db.transaction(async (trx) => {
    const row = await lockSubmissionForGood(trx, accountId, id);
    if (!row) throw problem('not-found', `No submission ${id}`);
    const fileKeys = await findFileKeys(trx, [id]);
    await props.audit.record(trx, {
      action: 'submission.deleted',
      target: { type: 'submission', id },
      details: { for_good: true },
    });
    await deleteSubmissionsOfForm(trx, row.form_id, [id]);
    return fileKeys;
  });
  await removeBlobs({ blobs: props.blobs, logger: props.logger, keys });
}

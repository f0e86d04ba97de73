import { Readable } from 'node:stream';
import type { BlobStore } from '../base/blob-store';
import type { Db } from '../base/db';
import type { Directions, SubmissionEvent, SubmissionStatus } from '../contracts/events';
import { type Clock } from '../contracts/time';
import { newId } from '../contracts/ids';
import { notifyOutboxRelays } from '../messaging/outbox';
import { prepareItem, preparePost, storeSubmissions, type StoreItem, type StoredUpload } from '../submissions/store';

/** A file of a test submission: with `content`, its bytes are put in the blob store; else only its row (of `size` bytes). */
export interface TestFile {
  id?: string;
  field?: string;
  filename?: string;
  contentType?: string;
  content?: string | Buffer;
  size?: number;
}

export interface StoredTestSubmission {
  id: string;
  eventId: string;
  /** The event as the relay publishes it. */
  event: SubmissionEvent;
  /** The stored files, in order, with their storage keys (`<account>/<form>/<submission>/<file>`, as ingest names them). */
  files: StoredUpload[];
}

/**
 * Stores a submission exactly as ingest does, through the same function (`preparePost` +
 * `storeSubmissions`): the row, its files, its outbox event, its
 * idempotency claim and, when received, its quota unit, in one transaction; then NOTIFYs the
 * outbox relays. Received at the platform clock's now unless `receivedAt` says. Unlike ingest it never
 * refuses for the quota (unless `quota` is given).
 * `rewrite` alters the item before it is stored, for tests of inconsistent rows and events.
 */
export async function storeTestSubmission(
  platform: { db: Db; blobs?: BlobStore; clock?: Clock },
  props: {
    accountId: string;
    formId: string;
    status?: SubmissionStatus;
    spamReason?: string;
    payload?: Record<string, string>;
    /** What the post's control fields asked (`_subject`, `_replyto`). */
    directions?: Directions;
    receivedAt?: Date;
    files?: TestFile[];
    formName?: string;
    quota?: number;
    idempotencyKey?: string;
    omitPayload?: boolean;
    rewrite?(item: StoreItem): void;
  },
): Promise<StoredTestSubmission> {
  const receivedAt = props.receivedAt ?? platform.clock?.now() ?? new Date();
  const id = newId('submission', receivedAt.getTime());
  const files: StoredUpload[] = [];
  for (const [n, f] of (props.files ?? []).entries()) {
    const fileId = f.id ?? newId('file');
    const file: StoredUpload = {
      id: fileId,
      field: f.field ?? 'file',
      filename: f.filename ?? `file-${n + 1}.bin`,
      content_type: f.contentType ?? 'application/octet-stream',
      size: f.content === undefined ? (f.size ?? 0) : Buffer.byteLength(f.content),
      storage_key: `${props.accountId}/${props.formId}/${id}/${fileId}`,
    };
    if (f.content !== undefined) {
      if (!platform.blobs) throw new Error('a test file with content needs the platform’s blob store');
      await platform.blobs.put(file.storage_key, Readable.from([Buffer.from(f.content)]), file.content_type);
    }
    files.push(file);
  }
  const status = props.status ?? 'received';
  const prepared = preparePost(
    {
      submissionId: id,
      form: {
        id: props.formId,
        account_id: props.accountId,
        name: props.formName ?? 'Test form',
        monthly_quota: props.quota ?? 2 ** 31 - 1,
      },
      receivedAt,
      spam: status === 'spam' ? (props.spamReason ?? 'honeypot') : undefined,
      payload: props.payload ?? { name: 'Ada', message: 'Hello' },
      directions: props.directions,
      files,
      idempotency: props.idempotencyKey
        ? { key: props.idempotencyKey, expiresAt: new Date(receivedAt.getTime() + 86_400_000) }
        : undefined,
      ip: '127.0.0.1',
      userAgent: 'intake-tests',
      referrer: undefined,
    },
    { omitPayload: props.omitPayload },
  );
  props.rewrite?.(prepared.item);
  const result = await storeSubmissions(platform.db, [prepareItem(prepared.item)], true);
  if (result.lost.length || result.refused.length || result.gone.length)
    throw new Error(`the test submission was not stored: ${JSON.stringify(result)}`);
  await notifyOutboxRelays(platform.db);
  const event = prepared.item.event.payload as SubmissionEvent;
  return { id, eventId: event.event_id, event, files };
}

import { Readable } from 'node:stream';
import { newId, type Platform } from '@intake/shared';

/** Writes a submission (and its files, in the blob store too) as ingest would store it. */
export async function seedSubmission(
  platform: Platform,
  props: {
    accountId: string;
    formId: string;
    status?: 'received' | 'spam';
    payload?: Record<string, string>;
    receivedAt?: Date;
    spamReason?: string | null;
    files?: { field: string; filename: string; contentType: string; content: string }[];
  },
): Promise<{ id: string; fileIds: string[]; keys: string[] }> {
  const receivedAt = props.receivedAt ?? new Date();
  const id = newId('submission', receivedAt.getTime());
  const files = props.files ?? [];
  await platform.db('submissions').insert({
    id,
    account_id: props.accountId,
    form_id: props.formId,
    status: props.status ?? 'received',
    payload: props.payload ?? {},
    file_count: files.length,
    file_bytes: files.reduce((n, f) => n + Buffer.byteLength(f.content), 0),
    spam_reason: props.spamReason ?? (props.status === 'spam' ? 'honeypot' : null),
    received_at: receivedAt,
  });
  const fileIds: string[] = [];
  const keys: string[] = [];
  for (const f of files) {
    const fileId = newId('file');
    const key = `${props.accountId}/${id}/${fileId}`;
    await platform.blobs.put(key, Readable.from([Buffer.from(f.content)]), f.contentType);
    await platform.db('submission_files').insert({
      id: fileId,
      submission_id: id,
      account_id: props.accountId,
      field: f.field,
      filename: f.filename,
      content_type: f.contentType,
      size: Buffer.byteLength(f.content),
      storage_key: key,
    });
    fileIds.push(fileId);
    keys.push(key);
  }
  return { id, fileIds, keys };
}

/** A small RFC 4180 reader for checking exports: quoted fields, doubled quotes, CRLF records. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field !== '' || record.length) records.push([...record, field]);
  return records;
}

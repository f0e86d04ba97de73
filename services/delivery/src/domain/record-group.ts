/**
 * Writes a group of records in one statement; when that fails, writes each record alone, so a record
 * is never lost because of another in its group. One result per record, in order, as a BatchQueue
 * write returns them.
 */
export async function recordGroupOrEach<T>(
  group: T[],
  write: (records: T[]) => Promise<void>,
): Promise<PromiseSettledResult<void>[]> {
  try {
    await write(group);
    return group.map(() => ({ status: 'fulfilled', value: undefined }));
  } catch (err) {
    if (group.length === 1) return [{ status: 'rejected', reason: err }];
    return Promise.allSettled(group.map((record) => write([record])));
  }
}

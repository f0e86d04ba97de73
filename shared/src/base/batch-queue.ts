export interface BatchQueueOptions<T> {
  /** Items per group at most. */
  maxGroup: number;
  /** Writes running at once at most. */
  maxInFlight: number;
  /**
   * With it, a write beyond the first starts only once this long has passed since the last write
   * started (the one in flight is held by a lock or a slow disk): until then the items wait for
   * the next group.
   */
  spareAfterMs?: number;
  /** With `maxWeight`: a group weighs at most `maxWeight` (an item heavier than that goes alone). */
  weigh?: (item: T) => number;
  maxWeight?: number;
  /**
   * With it, the items pushed in the same turn of the event loop go out together: the first waits
   * for the end of the turn (`setImmediate`) instead of going out at once alone.
   */
  gatherTurn?: boolean;
  /**
   * With it, an item waits this long for others before it goes out (for writes nobody waits on, such
   * as the record of a mail already sent: fewer, larger statements).
   */
  gatherMs?: number;
}

/**
 * THE batching primitive: every place that turns many calls into one statement or one publish uses it.
 * Hands items to `write` in groups: an item pushed while fewer than `maxInFlight` writes run goes
 * out at once (alone, when the service is quiet); items pushed meanwhile wait and go out together,
 * in order, at most `maxGroup` (and `maxWeight`) at a time, as soon as a write finishes. So a quiet
 * service adds no delay, and a busy one makes fewer, larger writes (group commit). `write` settles
 * every item of its group (one result per item, in order); when it rejects, every item of the group
 * is rejected with its error. With `spareAfterMs`, the writes beyond the first are spares: one
 * starts only when the ones in flight are slow, so a busy service makes still larger groups.
 */
export class BatchQueue<T, R> {
  private readonly waiting: { item: T; weight: number; resolve(value: R): void; reject(reason: unknown): void }[] = [];
  private inFlight = 0;
  /** When the last write started (`performance.now()`). */
  private lastStart = 0;
  private spareTimer: NodeJS.Timeout | undefined;
  private turnEnd: NodeJS.Immediate | NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (items: T[]) => Promise<PromiseSettledResult<R>[]>,
    private readonly options: BatchQueueOptions<T>,
  ) {}

  push(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, weight: this.options.weigh?.(item) ?? 0, resolve, reject });
      const { gatherTurn, gatherMs } = this.options;
      if (!gatherTurn && gatherMs === undefined) return this.next();
      const gathered = () => {
        this.turnEnd = undefined;
        this.next();
      };
      this.turnEnd ??= gatherMs === undefined ? setImmediate(gathered) : setTimeout(gathered, gatherMs);
    });
  }

  private next(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      if (this.inFlight > 0 && this.options.spareAfterMs !== undefined) {
        const wait = this.lastStart + this.options.spareAfterMs - performance.now();
        if (wait > 0) {
          this.spareTimer ??= setTimeout(() => {
            this.spareTimer = undefined;
            this.next();
          }, wait);
          return;
        }
      }
      const group = this.waiting.splice(0, this.groupSize());
      this.inFlight++;
      this.lastStart = performance.now();
      const settle = (results: PromiseSettledResult<R>[]) => {
        group.forEach((entry, i) => {
          const result = results[i];
          if (result?.status === 'fulfilled') entry.resolve(result.value);
          else entry.reject(result ? result.reason : new Error('the group write returned no result for this item'));
        });
      };
      const fail = (err: unknown) => {
        for (const entry of group) entry.reject(err);
      };
      // The slot is free again before the group's posts hear their answers, so the next group goes out at once.
      const done = () => {
        this.inFlight--;
        this.next();
      };
      // A write that throws synchronously fails its group like one that rejects.
      Promise.resolve()
        .then(() => this.write(group.map((entry) => entry.item)))
        .then(
          (results) => {
            done();
            settle(results);
          },
          (err: unknown) => {
            done();
            fail(err);
          },
        );
    }
  }

  /** How many of the waiting items the next group takes: at least one, then while count and weight allow. */
  private groupSize(): number {
    const { maxGroup, maxWeight = Infinity } = this.options;
    let weight = 0;
    let size = 0;
    for (const entry of this.waiting) {
      if (size === maxGroup || (size > 0 && weight + entry.weight > maxWeight)) break;
      weight += entry.weight;
      size++;
    }
    return size;
  }
}

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

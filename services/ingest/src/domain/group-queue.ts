/**
 * Hands items to `write` in groups: an item pushed while fewer than `maxInFlight` writes run goes
 * out at once (alone, when the service is quiet); items pushed meanwhile wait and go out together,
 * at most `maxGroup` at a time, as soon as a write finishes. So a quiet service adds no delay, and a
 * busy one makes fewer, larger writes (group commit). `write` settles every item of its group (one
 * result per item, in order); when it rejects, every item of the group is rejected with its error.
 */
export class GroupQueue<T, R> {
  private readonly waiting: { item: T; resolve(value: R): void; reject(reason: unknown): void }[] = [];
  private inFlight = 0;

  constructor(
    private readonly write: (items: T[]) => Promise<PromiseSettledResult<R>[]>,
    private readonly options: { maxGroup: number; maxInFlight: number },
  ) {}

  push(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      const group = this.waiting.splice(0, this.options.maxGroup);
      this.inFlight++;
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
      // A write that throws synchronously fails its group like one that rejects.
      Promise.resolve()
        .then(() => this.write(group.map((entry) => entry.item)))
        .then(settle, fail)
        .finally(() => {
          this.inFlight--;
          this.next();
        });
    }
  }
}

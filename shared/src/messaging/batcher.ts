/**
 * Gathers the calls made in the same turn of the event loop and runs them as one batch (one
 * query for many messages handled at once); each caller gets its own result. When the batch
 * fails, `single` (if given) runs each call alone, so one bad item fails only its own caller.
 */
export function tickBatcher<T, R>(options: {
  run(items: T[]): Promise<R[]>;
  single?(item: T): Promise<R>;
  max?: number;
  /** Wait this long for more calls after the first (default 0: the same turn of the event loop only). */
  waitMs?: number;
}): (item: T) => Promise<R> {
  const max = options.max ?? 100;
  let queue: { item: T; resolve(r: R): void; reject(err: unknown): void }[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const batch = queue.slice(0, max);
    queue = queue.slice(max);
    if (queue.length) schedule();
    options.run(batch.map((b) => b.item)).then(
      (results) => batch.forEach((b, i) => b.resolve(results[i] as R)),
      (err) => {
        const { single } = options;
        for (const b of batch) {
          if (single) single(b.item).then(b.resolve, b.reject);
          else b.reject(err);
        }
      },
    );
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    if (options.waitMs) setTimeout(flush, options.waitMs);
    else setImmediate(flush);
  };
  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      schedule();
    });
}

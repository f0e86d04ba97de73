import type { Platform } from '@intake/shared';

interface Unsettled {
  storageKeys: string[];
  /** When the store call failed (performance.now()). */
  at: number;
}

/**
 * The files of posts whose store call lost its connection to Postgres: the submission may have
 * been committed after all, so its files are not deleted with the answer (503). They wait here
 * until Postgres can say: once `graceMs` have passed (longer than a store transaction can still
 * be running server-side: its locks wait at most 5 s), the files of submissions that do not exist
 * are deleted; the others were stored and keep them. Tried again every `retryMs` while Postgres is
 * unreachable. In memory, per process: a process that stops first leaves those files orphaned
 * (never a submission without its files).
 */
export class UnsettledFiles {
  private readonly pending = new Map<string, Unsettled>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly platform: Pick<Platform, 'db' | 'blobs' | 'logger'>,
    private readonly options: { graceMs: number; retryMs: number; maxPending: number } = { graceMs: 10_000, retryMs: 2_000, maxPending: 10_000 },
  ) {}

  add(submissionId: string, storageKeys: string[]): void {
    if (this.pending.size >= this.options.maxPending) {
      this.platform.logger.warn({ submission_id: submissionId, storage_keys: storageKeys }, 'too many submissions of unknown outcome; these files stay, possibly orphaned');
      return;
    }
    this.pending.set(submissionId, { storageKeys, at: performance.now() });
    this.schedule();
  }

  get size(): number {
    return this.pending.size;
  }

  /** Settles what is older than `graceMs` (default: the configured grace); resolves when done or when Postgres could not answer. */
  async settle(graceMs = this.options.graceMs): Promise<void> {
    const due = [...this.pending].filter(([, u]) => performance.now() - u.at >= graceMs);
    if (due.length === 0) return;
    try {
      const stored = new Set<string>(await this.platform.db('submissions').whereIn('id', due.map(([id]) => id)).pluck('id'));
      for (const [id, u] of due) {
        if (!stored.has(id)) await this.platform.blobs.delete(u.storageKeys);
        this.pending.delete(id);
      }
    } catch (err) {
      this.platform.logger.warn({ err, pending: this.pending.size }, 'could not settle the files of submissions of unknown outcome yet; will retry');
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.settle().finally(() => {
        if (this.pending.size > 0) this.schedule();
      });
    }, this.options.retryMs);
    this.timer.unref();
  }
}

const registry = new WeakMap<Platform, UnsettledFiles>();

/** The unsettled files of this platform (one per process in production, one per test platform in tests). */
export function unsettledFilesOf(platform: Platform): UnsettledFiles {
  let unsettled = registry.get(platform);
  if (!unsettled) registry.set(platform, (unsettled = new UnsettledFiles(platform)));
  return unsettled;
}

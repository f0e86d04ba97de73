import type { Platform } from '@intake/shared/runtime';
import { findRunningBackendPids, findStoredSubmissionIds } from './submission.repository';

interface Unsettled {
  storageKeys: string[];
  /** The Postgres server process that ran the store call, when known. */
  backendPid: number | undefined;
  /** When the store call failed (performance.now()). */
  at: number;
}

/**
 * The files of posts whose store call may have committed although it failed (the connection broke
 * under way): they are not deleted with the answer (503), but wait here until Postgres can say
 * whether the submission exists. That is once the server process that ran the call has exited (a
 * process whose client is gone ends after its statement), and at least `graceMs` after the
 * failure (for a pooler in between, whose process ids are not the server's). Then the files of
 * submissions that do not exist are deleted; the others were stored and keep theirs. Tried again
 * every `retryMs` until then, also while Postgres is unreachable. In memory, per process (made by
 * `composeIngest`): a process
 * that stops first leaves those files orphaned (never a submission without its files).
 */
export class UnsettledFiles {
  private readonly pending = new Map<string, Unsettled>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly platform: Pick<Platform, 'db' | 'blobs' | 'logger'>,
    private readonly options: { graceMs: number; retryMs: number; maxPending: number } = {
      graceMs: 10_000,
      retryMs: 2_000,
      maxPending: 10_000,
    },
  ) {}

  add(submissionId: string, storageKeys: string[], backendPid: number | undefined): void {
    if (this.pending.size >= this.options.maxPending) {
      this.platform.logger.warn(
        { submission_id: submissionId, storage_keys: storageKeys },
        'too many submissions of unknown outcome; these files stay, possibly orphaned',
      );
      return;
    }
    this.pending.set(submissionId, { storageKeys, backendPid, at: performance.now() });
    this.schedule();
  }

  get size(): number {
    return this.pending.size;
  }

  /**
   * Settles what can be settled now (`graceMs`: the configured grace unless given); resolves when done, or when
   * Postgres could not answer.
   */
  async settle(graceMs = this.options.graceMs): Promise<void> {
    const old = [...this.pending].filter(([, u]) => performance.now() - u.at >= graceMs);
    if (old.length === 0) return;
    try {
      const pids = old.flatMap(([, u]) => (u.backendPid === undefined ? [] : [u.backendPid]));
      const running = await findRunningBackendPids(this.platform.db, pids);
      const due = old.filter(([, u]) => u.backendPid === undefined || !running.has(u.backendPid));
      if (due.length === 0) return;
      const stored = await findStoredSubmissionIds(
        this.platform.db,
        due.map(([id]) => id),
      );
      for (const [id, u] of due) {
        if (!stored.has(id)) await this.platform.blobs.delete(u.storageKeys);
        this.pending.delete(id);
      }
    } catch (err) {
      this.platform.logger.warn(
        { err, pending: this.pending.size },
        'could not settle the files of submissions of unknown outcome yet; will retry',
      );
    }
  }

  /** Stops retrying (what is still pending stays in storage). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.settle().finally(() => {
        if (this.pending.size > 0) this.schedule();
      });
    }, this.options.retryMs);
    this.timer.unref();
  }
}

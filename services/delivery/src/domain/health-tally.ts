import { type Db, type Logger } from '@intake/shared/base';
import { startPeriodic, type Worker } from '@intake/shared/runtime';
import { recordWebhookHealth, type HealthTallyRow } from '../repositories/webhook-health.repository';

/** How often a process writes the webhook health it tallied. */
export const HEALTH_TALLY_MS = 1000;

/**
 * A webhook's health (its last success and failure, its failures in a row and since when), tallied per process from
 * the attempts it records and written once a second for every webhook it saw, in one statement. Written with each
 * attempt's record, as it was, every batch holding a failing webhook's attempts updated that webhook's one row and
 * waited for the batch before it to commit, so a receiver answering 500 at once to a hundred posts a second made every
 * other account's records wait on that row (B's p99 post → webhook 90–137 ms alone, 372–1,092 ms beside it). A tally
 * counts an attempt once its record has committed; a process that dies loses at most a second of it (a failure
 * count low by that much; a streak's start and the alerts that follow it are kept by the next failure).
 */
/** A webhook's attempts since the last write: its latest success and failure, and the failures since that success. */
interface Tally {
  lastOk: Date | null;
  lastFail: Date | null;
  /** When each failure after `lastOk` started (attempts end out of order, so one may come after a later success). */
  fails: Date[];
}

export class HealthTally {
  private tallies = new Map<string, Tally>();
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly db: Db) {}

  /** Counts one recorded attempt of `webhookId`, started at `at`. */
  add(webhookId: string, at: Date, ok: boolean): void {
    const t = this.tallies.get(webhookId) ?? { lastOk: null, lastFail: null, fails: [] };
    this.tallies.set(webhookId, t);
    if (ok) {
      if (t.lastOk && t.lastOk >= at) return;
      t.lastOk = at;
      t.fails = t.fails.filter((f) => f > at);
      return;
    }
    if (!t.lastFail || t.lastFail < at) t.lastFail = at;
    if (!t.lastOk || at > t.lastOk) t.fails.push(at);
  }

  /** Writes what was tallied since the last write (one write at a time); a failed write is kept for the next. */
  write(): Promise<void> {
    this.writing = this.writing
      .catch(() => undefined)
      .then(async () => {
        const taken = this.tallies;
        if (taken.size === 0) return;
        this.tallies = new Map();
        try {
          await recordWebhookHealth(
            this.db,
            [...taken].map(([webhookId, t]) => row(webhookId, t)),
          );
        } catch (err) {
          // Put back under what came since: its attempts are newer, so they are added after.
          const since = this.tallies;
          this.tallies = taken;
          for (const [webhookId, t] of since) {
            if (t.lastOk) this.add(webhookId, t.lastOk, true);
            for (const f of t.fails) this.add(webhookId, f, false);
            const merged = this.tallies.get(webhookId);
            if (merged && t.lastFail && (!merged.lastFail || t.lastFail > merged.lastFail))
              merged.lastFail = t.lastFail;
          }
          throw err;
        }
      });
    return this.writing;
  }

  /** Writes every second until stopped, then once more. */
  start(logger: Logger): Worker {
    const periodic = startPeriodic({
      intervalMs: HEALTH_TALLY_MS,
      logger,
      failure: 'could not write the webhooks’ health; will retry',
      task: () => this.write(),
    });
    return {
      stop: async () => {
        await periodic.stop();
        await this.write().catch((err) => logger.warn({ err }, 'could not write the webhooks’ health'));
      },
    };
  }
}

function row(webhookId: string, t: Tally): HealthTallyRow {
  const first = t.fails.reduce<Date | null>((a, f) => (!a || f < a ? f : a), null);
  return { webhookId, lastOk: t.lastOk, lastFail: t.lastFail, failsSinceOk: t.fails.length, firstFailSinceOk: first };
}

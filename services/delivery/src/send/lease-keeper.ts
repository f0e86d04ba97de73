import { type Db, type Logger } from '@intake/shared/base';
import { startPeriodic, type Worker } from '@intake/shared/runtime';
import { extendDeliveryLeases } from './claim.repository';

/**
 * Keeps the leases this process holds while their attempts run. A lease lasts twice the webhook time-out, which an
 * attempt and its record fit in on a machine that keeps up; on one that does not (a CPU-starved process, a queue of
 * records), a lease that ran out let a redelivered copy of the request make the same attempt again: 72 of 1,600
 * deliveries sent twice with both cores busy (test/faults/backlog-duplicates). So every eighth of a lease, the leases
 * held a quarter of one or longer are extended in one statement: an attempt that ends quickly costs nothing more, a
 * slow one one statement a tick for all of them. A lease counts from before the claim that took it was sent (a claim
 * that answers late on a busy machine took its lease when it ran, not when it answered). A process that dies stops
 * extending, and its leases run out as before.
 */
export class LeaseKeeper {
  /** The deliveries whose attempts this process is making, with when each lease was taken or last extended. */
  private readonly held = new Map<string, number>();

  constructor(
    private readonly db: Db,
    readonly leaseMs: number,
  ) {}

  /** A lease taken by a claim sent at `since` (performance.now()): kept until `done`. */
  hold(id: string, since: number): void {
    this.held.set(id, since);
  }

  /** The attempt is over (recorded, given back, or failed): its lease is no longer extended. */
  done(id: string): void {
    this.held.delete(id);
  }

  /** Extends the leases held for a quarter of a lease or longer. */
  async extend(): Promise<void> {
    const now = performance.now();
    const due = [...this.held].filter(([, since]) => now - since >= this.leaseMs / 4).map(([id]) => id);
    if (due.length === 0) return;
    await extendDeliveryLeases(this.db, due, this.leaseMs);
    for (const id of due) if (this.held.has(id)) this.held.set(id, now);
  }

  /** Extends every eighth of a lease until stopped (a late tick still leaves most of a lease). */
  start(logger: Logger): Worker {
    return startPeriodic({
      intervalMs: this.leaseMs / 8,
      logger,
      failure: 'could not extend the leases of attempts in flight; will retry',
      task: () => this.extend(),
    });
  }
}

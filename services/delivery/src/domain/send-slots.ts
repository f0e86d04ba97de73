/**
 * Who may make an attempt now: the process's send slots shared so that a slow endpoint only slows itself. An attempt
 * takes a slot of its webhook (at most `perEndpoint` in flight each) and of its account, which may hold an equal share
 * of the slots among the accounts with attempts in flight, and never the last quarter: the consumer can only fetch a
 * newcomer's message while some of its slots are free. An attempt that may not start now is deferred:
 * its message goes back to JetStream for a while (a nak with a delay) and its slot in the consumer goes to another
 * message, so a receiver that hangs never holds more than its own slots, and a busy account never all of them.
 *
 * The deferral grows with how often the message was deferred or retried (JetStream's redelivery count): a backlog
 * behind a hanging endpoint comes back less and less often instead of being read again every few milliseconds.
 */
export interface SendSlotsOptions {
  /** Attempts in flight in this process (SEND_CONCURRENCY). */
  total: number;
  /** Attempts in flight per webhook in this process (WEBHOOK_ENDPOINT_CONCURRENCY). */
  perEndpoint: number;
}

/** An attempt's slot: given back when the attempt has been recorded. */
export interface Slot {
  release(): void;
}

/** The first and the longest wait of a deferred attempt. */
export const DEFER_MS = { first: 250, longest: 30_000 };

export class SendSlots {
  private readonly byEndpoint = new Map<string, number>();
  private readonly byAccount = new Map<string, number>();
  private inFlight = 0;

  constructor(private readonly options: SendSlotsOptions) {}

  /**
   * A slot for an attempt to `webhookId` of `accountId`, or how long to defer it (`redeliveries`: how many times its
   * message came back before, which makes the wait longer, with jitter so a backlog does not come back at once).
   */
  take(target: { accountId: string; webhookId: string }, redeliveries = 0): Slot | { deferMs: number } {
    const { accountId, webhookId } = target;
    const endpoint = this.byEndpoint.get(webhookId) ?? 0;
    const account = this.byAccount.get(accountId) ?? 0;
    const full = this.inFlight >= this.options.total;
    if (full || endpoint >= this.options.perEndpoint || account >= this.fairShare(account))
      return { deferMs: deferral(redeliveries) };
    this.byEndpoint.set(webhookId, endpoint + 1);
    this.byAccount.set(accountId, account + 1);
    this.inFlight += 1;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.inFlight -= 1;
        decrement(this.byEndpoint, webhookId);
        decrement(this.byAccount, accountId);
      },
    };
  }

  /** Attempts in flight now, for tests and metrics. */
  get busy(): number {
    return this.inFlight;
  }

  /**
   * What one account may hold: an equal share among the accounts with attempts in flight (this one counted), and
   * never the last quarter of the slots, so that another account's message can always be fetched and start.
   */
  private fairShare(held: number): number {
    const { total } = this.options;
    const accounts = this.byAccount.size + (held === 0 ? 1 : 0);
    const headroom = total > 1 ? Math.max(1, Math.floor(total / 4)) : 0;
    return Math.max(1, Math.min(total - headroom, Math.floor(total / accounts)));
  }
}

function decrement(map: Map<string, number>, key: string): void {
  const n = (map.get(key) ?? 1) - 1;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}

/** DEFER_MS.first doubled per earlier redelivery, up to DEFER_MS.longest, with up to a quarter of jitter. */
export function deferral(redeliveries: number): number {
  const base = Math.min(DEFER_MS.longest, DEFER_MS.first * 2 ** Math.min(redeliveries, 16));
  return Math.round(base * (0.75 + Math.random() * 0.25));
}

import { LRUCache } from 'lru-cache';

/**
 * Who may make an attempt now: the process's send slots shared so that a slow endpoint only slows itself.
 *
 * - An account holds at most an equal share of the slots among the accounts with attempts in flight, and never the
 *   last quarter: the consumer can only fetch another account's message while some of its slots are free.
 * - A slow webhook holds at most `perEndpoint` of them. A webhook is slow when its attempts have lately taken over
 *   SLOW_MS (a moving average of their durations) or one of them has been in flight that long now; a fast one may use
 *   its account's share less `perEndpoint` (room for the account's other webhooks), since a concurrency cap on a
 *   receiver that answers in 30 ms only caps its throughput (16 in flight held one webhook to 548–669 submissions a
 *   second where 48 gave 1,197–1,216, on the 2-core box).
 *
 * An attempt that may not start now is deferred: its message goes back to JetStream for about as long as one of its
 * webhook's attempts takes (when a slot may be free again; at least DEFER_MS.first, at most DEFER_MS.longest, with
 * jitter so a backlog does not come back at once), and its slot in the consumer goes to another message, so a
 * receiver that hangs never holds more than its share. The delivery's webhook and account are remembered
 * (`take`, `stillWaiting`), so when its message comes back and there is still no slot it is deferred again before any statement.
 */
export interface SendSlotsOptions {
  /** Attempts in flight in this process (SEND_CONCURRENCY). */
  total: number;
  /** Attempts in flight per slow webhook in this process (WEBHOOK_ENDPOINT_CONCURRENCY). */
  perEndpoint: number;
  /** The clock (tests move it). */
  now?: () => number;
}

/** An attempt's slot: given back when the receiver has answered (or not, in time). */
export interface Slot {
  release(): void;
}

/** Who a delivery's attempt is for: its account and webhook. */
export interface SlotTarget {
  accountId: string;
  webhookId: string;
}

/** The first and the longest wait of a deferred attempt. */
export const DEFER_MS = { first: 250, longest: 30_000 };

/** An attempt this long, or an average this long, makes its webhook slow. */
export const SLOW_MS = 1000;

interface Endpoint {
  /** When each attempt in flight started. */
  started: number[];
  /** Moving average of its attempts' durations (ms); undefined until one ended. */
  averageMs: number | undefined;
}

export class SendSlots {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly byAccount = new Map<string, number>();
  /** The targets of deliveries deferred lately, by delivery id. */
  private readonly deferred = new LRUCache<string, SlotTarget>({ max: 100_000 });
  private inFlight = 0;
  private readonly now: () => number;

  constructor(private readonly options: SendSlotsOptions) {
    this.now = options.now ?? Date.now;
  }

  /** How long to defer an attempt for a delivery deferred before whose target still has no slot, or undefined. */
  stillWaiting(deliveryId: string): number | undefined {
    const target = this.deferred.get(deliveryId);
    return target ? this.wait(target) : undefined;
  }

  /** A slot for an attempt to `target`'s webhook, or how long to defer it (the delivery remembered meanwhile). */
  take(target: SlotTarget, deliveryId?: string): Slot | { deferMs: number } {
    const { accountId, webhookId } = target;
    const deferMs = this.wait(target);
    if (deferMs !== undefined) {
      if (deliveryId) this.deferred.set(deliveryId, target);
      return { deferMs };
    }
    if (deliveryId) this.deferred.delete(deliveryId);
    const endpoint = this.endpoints.get(webhookId) ?? { started: [], averageMs: undefined };
    const account = this.byAccount.get(accountId) ?? 0;
    const startedAt = this.now();
    endpoint.started.push(startedAt);
    this.endpoints.set(webhookId, endpoint);
    this.byAccount.set(accountId, account + 1);
    this.inFlight += 1;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.inFlight -= 1;
        const n = (this.byAccount.get(accountId) ?? 1) - 1;
        if (n <= 0) this.byAccount.delete(accountId);
        else this.byAccount.set(accountId, n);
        this.ended(webhookId, endpoint, startedAt);
      },
    };
  }

  /** Attempts in flight now, for tests and metrics. */
  get busy(): number {
    return this.inFlight;
  }

  /** Undefined when an attempt to `target` may start now, else how long to wait for a slot. */
  private wait(target: SlotTarget): number | undefined {
    const endpoint = this.endpoints.get(target.webhookId);
    const account = this.byAccount.get(target.accountId) ?? 0;
    const share = this.fairShare(account);
    const held = endpoint?.started.length ?? 0;
    // A fast webhook leaves room for its account's other webhooks (one of which may be slow) too.
    const { perEndpoint, total } = this.options;
    const slow = endpoint !== undefined && this.isSlow(endpoint);
    const cap = Math.min(share, slow ? perEndpoint : Math.max(perEndpoint, share - perEndpoint));
    if (this.inFlight < total && account < share && held < cap) return undefined;
    return deferral(endpoint?.averageMs ?? 0);
  }

  private isSlow(endpoint: Endpoint): boolean {
    const oldest = endpoint.started[0];
    return (endpoint.averageMs ?? 0) >= SLOW_MS || (oldest !== undefined && this.now() - oldest >= SLOW_MS);
  }

  /** An attempt ended: its duration joins the average; a fast webhook with nothing in flight is forgotten. */
  private ended(webhookId: string, endpoint: Endpoint, startedAt: number): void {
    endpoint.started.splice(endpoint.started.indexOf(startedAt), 1);
    const duration = this.now() - startedAt;
    endpoint.averageMs = endpoint.averageMs === undefined ? duration : 0.8 * endpoint.averageMs + 0.2 * duration;
    if (endpoint.started.length === 0 && endpoint.averageMs < SLOW_MS) this.endpoints.delete(webhookId);
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

/** About one attempt's time (`averageMs`), within DEFER_MS, less up to half of it at random. */
export function deferral(averageMs: number): number {
  const base = Math.min(DEFER_MS.longest, Math.max(DEFER_MS.first, averageMs));
  return Math.round(base * (0.5 + Math.random() * 0.5));
}

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
 * webhook's attempts takes (when a slot may be free again: their average, or the age of the oldest in flight when that
 * is longer; at least DEFER_MS.first, at most DEFER_MS.longest, with jitter so a backlog does not come back at once),
 * and its slot in the consumer goes to another message, so a receiver that hangs never holds more than its share. A
 * request names its delivery's webhook and account (and a deferred delivery's are remembered), so when there is no slot
 * for it, it is deferred, or parked, before any statement reads it (`beforeClaim`).
 */
export interface SendSlotsOptions {
  /** Attempts in flight in this process (SEND_CONCURRENCY). */
  total: number;
  /** Attempts in flight per slow webhook in this process (WEBHOOK_ENDPOINT_CONCURRENCY). */
  perEndpoint: number;
  /** The clock (tests move it). */
  now?: () => number;
}

/**
 * Why an attempt may not start now and for how long: no free slot (wait in JetStream about that long), or its webhook
 * is broken (`broken`: park the delivery in Postgres that long, so its message does not hold the consumer's
 * `max_ack_pending` while the webhook stays broken).
 */
export interface Deferral {
  deferMs: number;
  broken?: true;
}

/** An attempt's slot: given back when the receiver has answered (or not, in time), with whether it succeeded. */
export interface Slot {
  release(ok?: boolean): void;
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

/**
 * A webhook whose last BREAK.after attempts in this process all failed is broken: it gets one attempt (a probe) at a
 * time, the first `firstMs` after the streak began and then at twice the interval after each failed probe (at most
 * `longestMs`); every other attempt is parked in Postgres until about the next probe (`Deferral.broken`), and the
 * parking pump keeps a broken webhook's parked deliveries parked but for its probe (`brokenFor`). Its first success
 * ends it. A receiver answering 500 at once otherwise takes two attempts a second for each post a second (the first and
 * the 1 s retry), and their CPU slowed every other account's webhooks on the same replicas (docs/decisions/delivery.md#one-account-cannot-hold-up-another). A
 * deferred attempt is not made, so it keeps its number on the ladder: no delivery fails sooner for it.
 */
export const BREAK = { after: 50, firstMs: 1000, longestMs: 30_000 };

interface Endpoint {
  /** When each attempt in flight started. */
  started: number[];
  /** Moving average of its attempts' durations (ms); undefined until one ended. */
  averageMs: number | undefined;
  /** Its attempts that failed in a row (ended with `release(false)`). */
  failing: number;
  /** While broken (BREAK): when the next probe may start, the wait after a failed one, and the one in flight. */
  probeAt: number;
  probeMs: number;
  probeStartedAt: number | undefined;
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

  /**
   * Whether a delivery's attempt may not start now, decided before its delivery is read: by the target its request
   * names, or the one remembered when it was deferred before. A deferral to wait in JetStream (the delivery remembered
   * meanwhile), or with `broken` one to park; undefined when it may start, or its target is not known yet.
   */
  beforeClaim(deliveryId: string, named?: SlotTarget, options: { probe?: boolean } = {}): Deferral | undefined {
    const target = this.deferred.get(deliveryId) ?? named;
    const wait = target ? this.wait(target, options.probe === true) : undefined;
    if (wait && !wait.broken) this.deferred.set(deliveryId, target!);
    return wait;
  }

  /** A slot for an attempt to `target`'s webhook, or how long to defer it (the delivery remembered meanwhile). */
  take(target: SlotTarget, deliveryId?: string, options: { probe?: boolean } = {}): Slot | Deferral {
    const { accountId, webhookId } = target;
    const wait = this.wait(target, options.probe === true);
    if (wait !== undefined) {
      if (deliveryId && !wait.broken) this.deferred.set(deliveryId, target);
      return wait;
    }
    if (deliveryId) this.deferred.delete(deliveryId);
    const endpoint = this.endpoints.get(webhookId) ?? newEndpoint();
    const account = this.byAccount.get(accountId) ?? 0;
    const startedAt = this.now();
    // A broken webhook's probe: the attempts after it wait for its answer (it is in flight).
    if (endpoint.failing >= BREAK.after) endpoint.probeStartedAt = startedAt;
    endpoint.started.push(startedAt);
    this.endpoints.set(webhookId, endpoint);
    this.byAccount.set(accountId, account + 1);
    this.inFlight += 1;
    let released = false;
    return {
      release: (ok?: boolean) => {
        if (released) return;
        released = true;
        this.tally(endpoint, ok, startedAt);
        this.inFlight -= 1;
        const n = (this.byAccount.get(accountId) ?? 1) - 1;
        if (n <= 0) this.byAccount.delete(accountId);
        else this.byAccount.set(accountId, n);
        this.ended(webhookId, endpoint, startedAt);
      },
    };
  }

  /**
   * Whether `webhookId` is broken here (BREAK): when its next probe may start (0: now) and the wait between probes;
   * undefined when it is not.
   */
  brokenFor(webhookId: string): { probeInMs: number; probeEveryMs: number } | undefined {
    const endpoint = this.endpoints.get(webhookId);
    if (!endpoint || endpoint.failing < BREAK.after) return undefined;
    const probeInMs = endpoint.started.length > 0 ? endpoint.probeMs : Math.max(0, endpoint.probeAt - this.now());
    return { probeInMs, probeEveryMs: endpoint.probeMs };
  }

  /** Attempts in flight now, for tests and metrics. */
  get busy(): number {
    return this.inFlight;
  }

  /** Undefined when an attempt to `target` may start now, else how long to wait for a slot. */
  private wait(target: SlotTarget, probe = false): Deferral | undefined {
    const endpoint = this.endpoints.get(target.webhookId);
    const account = this.byAccount.get(target.accountId) ?? 0;
    const share = this.fairShare(account);
    const held = endpoint?.started.length ?? 0;
    // A fast webhook leaves room for its account's other webhooks (one of which may be slow) too.
    const { perEndpoint, total } = this.options;
    if (!probe && endpoint && endpoint.failing >= BREAK.after && (held > 0 || this.now() < endpoint.probeAt))
      return { deferMs: deferral(Math.max(endpoint.probeAt - this.now(), endpoint.probeMs / 2)), broken: true };
    const slow = endpoint !== undefined && this.isSlow(endpoint);
    const cap = Math.min(share, slow ? perEndpoint : Math.max(perEndpoint, share - perEndpoint));
    if (this.inFlight < total && account < share && held < cap) return undefined;
    return { deferMs: deferral(this.attemptMs(endpoint)) };
  }

  /**
   * About how long one of a webhook's attempts takes: the moving average of those that ended, or longer while one in
   * flight has run longer (a receiver that never answers has no average until its first time-out).
   */
  private attemptMs(endpoint: Endpoint | undefined): number {
    const oldest = endpoint?.started[0];
    return Math.max(endpoint?.averageMs ?? 0, oldest === undefined ? 0 : this.now() - oldest);
  }

  private isSlow(endpoint: Endpoint): boolean {
    const oldest = endpoint.started[0];
    return (endpoint.averageMs ?? 0) >= SLOW_MS || (oldest !== undefined && this.now() - oldest >= SLOW_MS);
  }

  /** An attempt's outcome (undefined: not told) moves its webhook's failure streak; a success ends a break. */
  private tally(endpoint: Endpoint, ok: boolean | undefined, startedAt: number): void {
    const wasProbe = endpoint.probeStartedAt === startedAt;
    if (wasProbe) endpoint.probeStartedAt = undefined;
    if (ok === undefined) return;
    if (ok) {
      endpoint.failing = 0;
      endpoint.probeMs = BREAK.firstMs;
      return;
    }
    endpoint.failing += 1;
    // Broken now: a first probe in `firstMs`; a failed probe: the next in twice its wait. (Attempts already in flight
    // when it broke that fail too move nothing.)
    if (endpoint.failing === BREAK.after) endpoint.probeAt = this.now() + BREAK.firstMs;
    else if (wasProbe) {
      endpoint.probeMs = Math.min(BREAK.longestMs, endpoint.probeMs * 2);
      endpoint.probeAt = this.now() + endpoint.probeMs;
    }
  }

  /**
   * An attempt ended: its duration joins the average; a fast webhook with nothing in flight and no failure streak is
   * forgotten.
   */
  private ended(webhookId: string, endpoint: Endpoint, startedAt: number): void {
    endpoint.started.splice(endpoint.started.indexOf(startedAt), 1);
    const duration = this.now() - startedAt;
    endpoint.averageMs = endpoint.averageMs === undefined ? duration : 0.8 * endpoint.averageMs + 0.2 * duration;
    if (endpoint.started.length === 0 && endpoint.averageMs < SLOW_MS && endpoint.failing === 0)
      this.endpoints.delete(webhookId);
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

function newEndpoint(): Endpoint {
  return {
    started: [],
    averageMs: undefined,
    failing: 0,
    probeAt: 0,
    probeMs: BREAK.firstMs,
    probeStartedAt: undefined,
  };
}

/** About one attempt's time (`averageMs`), within DEFER_MS, less up to half of it at random. */
export function deferral(averageMs: number): number {
  const base = Math.min(DEFER_MS.longest, Math.max(DEFER_MS.first, averageMs));
  return Math.round(base * (0.5 + Math.random() * 0.5));
}

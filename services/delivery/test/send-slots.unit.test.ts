import { BREAK, DEFER_MS, deferral, SendSlots } from '../src/send/slots';

const take = (slots: SendSlots, accountId: string, webhookId: string) => slots.take({ accountId, webhookId });
const taken = (slot: ReturnType<SendSlots['take']>) => 'release' in slot;

describe('send slots', () => {
  it('let a fast webhook use its account’s share, and a slow one (an attempt or the average over a second) only its own', () => {
    let now = 0;
    const slots = new SendSlots({ total: 64, perEndpoint: 8, now: () => now });
    const fast = Array.from({ length: 40 }, () => take(slots, 'acc_a', 'wh_fast'));
    expect(fast.every(taken)).toBe(true);
    // 40 = the account's 48, less 8 for its other webhooks.
    expect(take(slots, 'acc_a', 'wh_fast')).toEqual({ deferMs: expect.any(Number) });
    expect(taken(take(slots, 'acc_a', 'wh_other'))).toBe(true);
    for (const slot of fast) (slot as { release(): void }).release();
    // A receiver that hangs: ten start while nothing says it is slow; once one has run a second, no more start.
    const held = Array.from({ length: 10 }, () => take(slots, 'acc_a', 'wh_hangs'));
    expect(held.every(taken)).toBe(true);
    now += 1000;
    expect(take(slots, 'acc_a', 'wh_hangs')).toEqual({ deferMs: expect.any(Number) });
    expect(taken(take(slots, 'acc_a', 'wh_fast'))).toBe(true);
    // Its attempts end after a second each: slow on average, so it gets back only to its own eight.
    for (const slot of held.slice(0, 3)) (slot as { release(): void }).release();
    (held[0] as { release(): void }).release(); // twice is once
    expect(taken(take(slots, 'acc_a', 'wh_hangs'))).toBe(true);
    expect(take(slots, 'acc_a', 'wh_hangs')).toEqual({ deferMs: expect.any(Number) });
  });

  it('never give one account the last quarter of the slots, and share them equally once others come', () => {
    const slots = new SendSlots({ total: 64, perEndpoint: 64 });
    let a = 0;
    while (taken(take(slots, 'acc_a', `wh_${a}`))) a += 1;
    expect(a).toBe(48);
    // Another account finds room at once, up to its equal share.
    let b = 0;
    while (taken(take(slots, 'acc_b', `wh_b${b}`))) b += 1;
    expect(b).toBe(16); // the slots left: 64 in all
    expect(slots.busy).toBe(64);
  });

  it('defer about as long as the webhook’s attempts take, and remember who a deferred delivery is for', () => {
    expect(deferral(0)).toBeGreaterThanOrEqual(DEFER_MS.first * 0.5);
    expect(deferral(0)).toBeLessThanOrEqual(DEFER_MS.first);
    expect(deferral(4000)).toBeGreaterThanOrEqual(2000);
    expect(deferral(4000)).toBeLessThanOrEqual(4000);
    expect(deferral(10 ** 9)).toBeLessThanOrEqual(DEFER_MS.longest);
    const slots = new SendSlots({ total: 1, perEndpoint: 1 });
    const first = take(slots, 'acc_a', 'wh_a');
    expect(slots.beforeClaim('whd_2')).toBeUndefined(); // never seen, and its request names no webhook
    expect(slots.take({ accountId: 'acc_a', webhookId: 'wh_a' }, 'whd_2')).toEqual({ deferMs: expect.any(Number) });
    expect(slots.beforeClaim('whd_2')).toEqual({ deferMs: expect.any(Number) });
    // A request that names its webhook is decided before its delivery is read, and remembered.
    expect(slots.beforeClaim('whd_3', { accountId: 'acc_a', webhookId: 'wh_a' })).toEqual({
      deferMs: expect.any(Number),
    });
    (first as { release(): void }).release();
    expect([slots.beforeClaim('whd_2'), slots.beforeClaim('whd_3')]).toEqual([undefined, undefined]);
  });

  it('break a webhook whose last attempts all failed: one probe at a time, at doubling intervals, until a success', () => {
    let now = 0;
    const slots = new SendSlots({ total: 64, perEndpoint: 8, now: () => now });
    const attempt = (ok: boolean) => {
      const slot = take(slots, 'acc_a', 'wh_500');
      if ('release' in slot) slot.release(ok);
      return 'release' in slot;
    };
    for (let i = 0; i < BREAK.after - 1; i++) expect(attempt(false)).toBe(true);
    // One success anywhere in the streak starts it again.
    expect(attempt(true)).toBe(true);
    for (let i = 0; i < BREAK.after; i++) expect(attempt(false)).toBe(true);
    // Broken: nothing for a second (the delivery is to be parked, not deferred in JetStream), while other webhooks (of
    // the same account too) go on.
    const waiting = take(slots, 'acc_a', 'wh_500');
    expect(waiting).toEqual({ deferMs: expect.any(Number), broken: true });
    expect((waiting as { deferMs: number }).deferMs).toBeGreaterThanOrEqual(BREAK.firstMs / 2);
    expect(taken(take(slots, 'acc_a', 'wh_fine'))).toBe(true);
    // A request naming it is to be parked before its delivery is read; a replay's is not held back.
    const named = { accountId: 'acc_a', webhookId: 'wh_500' };
    expect(slots.beforeClaim('whd_9', named)).toEqual({ deferMs: expect.any(Number), broken: true });
    expect(slots.beforeClaim('whd_9', named, { probe: true })).toBeUndefined();
    now += BREAK.firstMs;
    // One probe; a second waits for its answer.
    const probe = take(slots, 'acc_a', 'wh_500');
    expect(taken(probe)).toBe(true);
    expect(taken(take(slots, 'acc_a', 'wh_500'))).toBe(false);
    (probe as { release(ok: boolean): void }).release(false);
    // It failed: the next probe comes two seconds on, not one.
    now += BREAK.firstMs;
    expect(taken(take(slots, 'acc_a', 'wh_500'))).toBe(false);
    // The owner's test ping is not held back, and its success ends the break.
    const ping = slots.take({ accountId: 'acc_a', webhookId: 'wh_500' }, undefined, { probe: true });
    expect(taken(ping)).toBe(true);
    (ping as { release(ok: boolean): void }).release(true);
    expect([attempt(true), attempt(true)]).toEqual([true, true]);
  });
});

describe('send slots, beside a receiver that never answers', () => {
  it('defer a webhook whose attempt has hung as long as it has hung, before any of its attempts has ended', () => {
    let now = 0;
    const slots = new SendSlots({ total: 64, perEndpoint: 8, now: () => now });
    for (let i = 0; i < 8; i++) take(slots, 'acc_a', 'wh_hangs');
    now += 8000;
    // No average yet (none ended): without the age of the oldest in flight it would come back every 250 ms.
    const deferred = take(slots, 'acc_a', 'wh_hangs') as { deferMs: number };
    expect(deferred.deferMs).toBeGreaterThanOrEqual(4000);
    expect(deferred.deferMs).toBeLessThanOrEqual(8000);
  });
});

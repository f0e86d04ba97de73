import { DEFER_MS, deferral, SendSlots } from '../src/domain/send-slots';

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
    now += 1; // (the other webhook's attempt stays in flight: a second webhook of the account, fast so far)
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

  it('defer longer each time a message comes back, up to a limit, with jitter', () => {
    expect(deferral(0)).toBeGreaterThanOrEqual(DEFER_MS.first * 0.75);
    expect(deferral(0)).toBeLessThanOrEqual(DEFER_MS.first);
    expect(deferral(3)).toBeGreaterThanOrEqual(DEFER_MS.first * 8 * 0.75);
    expect(deferral(40)).toBeLessThanOrEqual(DEFER_MS.longest);
    expect(deferral(40)).toBeGreaterThanOrEqual(DEFER_MS.longest * 0.75);
  });
});

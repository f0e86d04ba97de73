import { DEFER_MS, deferral, SendSlots } from '../src/domain/send-slots';

const take = (slots: SendSlots, accountId: string, webhookId: string) => slots.take({ accountId, webhookId });
const taken = (slot: ReturnType<SendSlots['take']>) => 'release' in slot;

describe('send slots', () => {
  it('give a webhook at most its share, and its slots back when released', () => {
    const slots = new SendSlots({ total: 64, perEndpoint: 8 });
    const held = Array.from({ length: 8 }, () => take(slots, 'acc_a', 'wh_hangs'));
    expect(held.every(taken)).toBe(true);
    expect(take(slots, 'acc_a', 'wh_hangs')).toEqual({ deferMs: expect.any(Number) });
    expect(taken(take(slots, 'acc_a', 'wh_other'))).toBe(true);
    (held[0] as { release(): void }).release();
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

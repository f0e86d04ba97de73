import { pauseAfter, PURGE_DUTY } from '../src/lifecycle/purge';

describe('the purge’s pace', () => {
  it('waits after each batch so that it works `duty` of the time, at most 2 s at once', () => {
    expect(PURGE_DUTY).toBe(0.1);
    expect(pauseAfter(120)).toBe(1080);
    expect(pauseAfter(120, 0.25)).toBe(360);
    expect(pauseAfter(120, 0.5)).toBe(120);
    expect(pauseAfter(120, 0.75)).toBe(40);
    expect(pauseAfter(500)).toBe(2000);
    // Duty 1 (or a nonsense value) does not pace.
    expect(pauseAfter(120, 1)).toBe(0);
    expect(pauseAfter(120, 0)).toBe(0);
    expect(pauseAfter(120, Number.NaN)).toBe(0);
  });
});

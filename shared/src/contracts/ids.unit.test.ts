import { toTimestamp, monthOf, periodKey } from './time';
import { firstIdAt, newId } from './ids';

describe('ids', () => {
  it('prefixes ids by kind', () => {
    expect(newId('form')).toMatch(/^frm_[0-9a-z]{26}$/);
    expect(newId('submission')).toMatch(/^sub_/);
    expect(newId('webhook')).toMatch(/^wh_/);
    expect(newId('delivery')).toMatch(/^whd_/);
    expect(newId('account')).toMatch(/^acc_/);
    expect(newId('apiKey')).toMatch(/^key_/);
  });

  it('sorts by creation time, also within one millisecond', () => {
    const ids = [newId('form', 1000), newId('form', 1000), newId('form', 2000), newId('form', 2000)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(4);
  });

  it('bounds the ids of a moment: those made before it sort below, those made at or after it above', () => {
    // Later than any id made so far: the factory never goes back in time.
    const moment = Date.now() + 3_600_000;
    const before = newId('delivery', moment - 1);
    const at = newId('delivery', moment);
    const after = newId('delivery', moment + 1);
    expect([after, firstIdAt('delivery', moment), at, before].sort()).toEqual([
      before,
      firstIdAt('delivery', moment),
      at,
      after,
    ]);
  });
});

describe('time', () => {
  it('formats ISO-8601 UTC with milliseconds', () => {
    expect(toTimestamp(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)))).toBe('2026-01-02T03:04:05.006Z');
    expect(toTimestamp(0)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('finds the UTC calendar month', () => {
    const { start, end } = monthOf(new Date('2026-12-31T23:59:59.999Z'));
    expect(start.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(end.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(periodKey(new Date('2027-01-01T00:00:00.000Z'))).toBe('2027-01-01');
  });

  it('formats every date as toISOString does, out-of-range years and invalid dates included', () => {
    const edges = [0, -1, Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1), Date.UTC(0, 0, 1)];
    const yearZero = new Date(0);
    yearZero.setUTCFullYear(0);
    const negative = new Date(0);
    negative.setUTCFullYear(-1);
    const spread = Array.from({ length: 2000 }, (_, i) => Date.UTC(1900, 0, 1) + i * 77_777_777_777);
    for (const at of [...edges, ...spread].map((ms) => new Date(ms)).concat(yearZero, negative)) {
      expect(toTimestamp(at)).toBe(at.toISOString());
      expect(toTimestamp(at.getTime())).toBe(at.toISOString());
      const year = at.getUTCFullYear();
      if (year >= 0 && year <= 9999) expect(periodKey(at)).toBe(`${at.toISOString().slice(0, 7)}-01`);
    }
    expect(toTimestamp('2026-11-22T10:00:00+01:00')).toBe('2026-11-22T09:00:00.000Z');
    expect(() => toTimestamp('not a date')).toThrow(RangeError);
    expect(() => periodKey(new Date(NaN))).toThrow(RangeError);
  });
});

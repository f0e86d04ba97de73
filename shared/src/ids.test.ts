import { newId } from './ids';
import { toTimestamp, monthOf, periodKey } from './time';

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
});

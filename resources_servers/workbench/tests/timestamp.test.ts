/** pd.Timestamp(str) as the calendar and email tools use it. */
import { describe, expect, it } from 'vitest';
import { compareTimestamps, toTimestamp } from '../src/timestamp.js';

const ok = (s: string) => toTimestamp(s);
const wall = (s: string) => {
  const t = ok(s);
  return new Date(t.us / 1000).toISOString().replace('.000Z', '');
};

describe('toTimestamp', () => {
  it('pandas ISO forms', () => {
    expect(wall('2023-12-01 10:00:00')).toBe('2023-12-01T10:00:00');
    expect(wall('2023-12-01')).toBe('2023-12-01T00:00:00');
    expect(wall('2023-12-01T10:30')).toBe('2023-12-01T10:30:00');
    expect(wall('2023/12/1 9:05')).toBe('2023-12-01T09:05:00');
    expect(wall('20231201')).toBe('2023-12-01T00:00:00');
    expect(wall('2023-12-01 10')).toBe('2023-12-01T10:00:00');
    expect(wall('2023')).toBe('2023-01-01T00:00:00');
    expect(wall('2023-12')).toBe('2023-12-01T00:00:00');
    expect(ok('2023-12-01 10:00:00.25').us - ok('2023-12-01 10:00:00').us).toBe(250_000);
  });

  it('time zones make an aware timestamp; comparing with a naive one is a TypeError', () => {
    const z = ok('2023-12-01T10:00:00Z');
    const plus = ok('2023-12-01T11:00:00+01:00');
    expect(z.aware && plus.aware).toBe(true);
    expect(compareTimestamps(z, plus)).toBe(0);
    expect(z.date).toBe('2023-12-01');
    expect(() => compareTimestamps(z, ok('2023-12-01 10:00:00'))).toThrow('Cannot compare tz-naive and tz-aware timestamps');
  });

  it('MM/DD/YYYY, then the dateutil forms models write', () => {
    expect(wall('12/01/2023')).toBe('2023-12-01T00:00:00');
    expect(wall('13/01/2023')).toBe('2023-01-13T00:00:00');
    expect(wall('December 1, 2023 10:00 AM')).toBe('2023-12-01T10:00:00');
    expect(wall('Dec 1 2023 3pm')).toBe('2023-12-01T15:00:00');
    expect(wall('Friday, 1st of December 2023 at 12:30 PM')).toBe('2023-12-01T12:30:00');
    expect(wall('1 Dec 2023')).toBe('2023-12-01T00:00:00');
    expect(ok('December 1').date).toBe('0001-12-01');
  });

  it('what pandas rejects is a ValueError with its text; other types a TypeError', () => {
    expect(() => ok('not a date')).toThrow('Unknown datetime string format, unable to parse: not a date');
    expect(() => ok('2023-02-30')).toThrow('day is out of range for month: 2023-02-30');
    expect(() => ok('2023-13-01')).toThrow('month must be in 1..12: 2023-13-01');
    expect(() => ok('99')).toThrow('Given date string "99" not likely a datetime');
    expect(() => toTimestamp(true)).toThrow("Cannot convert input [true] of type <class 'bool'> to Timestamp");
    expect(toTimestamp(0).date).toBe('1970-01-01');
  });
});

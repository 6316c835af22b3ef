/**
 * `pd.Timestamp(value)` as the calendar and email tools use it: is the value accepted, which
 * instant is it (for ordering), which calendar date (for `.date()`), and is it time-zone aware.
 *
 * Strings go through pandas' own order: its ISO 8601 reader (lenient: `2023-12-01`, `2023/12/1`,
 * `20231201`, `2023-12-01T10`, `2023-12-01 10:00:00.5+01:00`, ...), then `MM/DD/YYYY`-style dates,
 * then dateutil. The dateutil step is covered for the forms a model writes (month names, weekday
 * names, `10am`, `3:30 PM`, `Dec 1, 2023`, `1st of December 2023 at 10:00`, `UTC`/`Z`/offsets); a
 * string only dateutil's rarer rules accept is reported as not a date (see README).
 */
import { PyException, PyFloat, typeName, type Value } from './py.js';

export interface Timestamp {
  /** Microseconds since 1970-01-01 of the wall time (naive) or of the UTC instant (aware). */
  us: number;
  /** Sub-microsecond part, 0..999. */
  ns: number;
  aware: boolean;
  /** Wall-clock calendar date `YYYY-MM-DD` (what `.date()` returns). */
  date: string;
}

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  us: number;
  ns: number;
  /** Offset in minutes east of UTC, or null for naive. */
  offset: number | null;
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysIn(y: number, m: number): number {
  return [31, isLeap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!;
}

function build(p: Parts): Timestamp {
  const d = new Date(0);
  d.setUTCFullYear(p.year, p.month - 1, p.day);
  d.setUTCHours(p.hour, p.minute, p.second, 0);
  let us = d.getTime() * 1000 + p.us;
  if (p.offset !== null) us -= p.offset * 60_000_000;
  const date = `${String(p.year).padStart(4, '0')}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
  return { us, ns: p.ns, aware: p.offset !== null, date };
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isSpace = (c: string | undefined): boolean => c !== undefined && /[\t\n\v\f\r ]/.test(c);

/** pandas' ISO 8601 reader (vendored numpy `parse_iso_8601_datetime`); null when it rejects the string. */
function parseIso(s: string): Parts | null {
  let i = 0;
  const n = s.length;
  while (i < n && isSpace(s[i])) i++;
  let neg = false;
  if (s[i] === '-') {
    neg = true;
    i++;
  }
  if (i >= n) return null;
  const p: Parts = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0, us: 0, ns: 0, offset: null };
  if (n - i >= 4 && isDigit(s[i]) && isDigit(s[i + 1]) && isDigit(s[i + 2]) && isDigit(s[i + 3])) {
    p.year = Number(s.slice(i, i + 4));
    i += 4;
  }
  if (neg) p.year = -p.year;
  if (i >= n) return p.year >= 1 ? p : null;
  let sep = '';
  if (!isDigit(s[i])) {
    if (!['-', '.', '/', '\\', ' '].includes(s[i]!)) return null;
    sep = s[i]!;
    i++;
    if (i >= n || !isDigit(s[i])) return null;
  }
  p.month = Number(s[i]);
  i++;
  if (isDigit(s[i])) {
    p.month = p.month * 10 + Number(s[i]);
    i++;
  } else if (!sep) return null;
  if (p.month < 1 || p.month > 12) return null;
  if (i >= n) return sep && p.year >= 1 ? p : null;
  if (sep) {
    if (s[i] !== sep || i === n - 1) return null;
    i++;
  }
  if (!isDigit(s[i])) return null;
  p.day = Number(s[i]);
  i++;
  if (isDigit(s[i])) {
    p.day = p.day * 10 + Number(s[i]);
    i++;
  } else if (!sep) return null;
  if (p.year < 1 || p.day < 1 || p.day > daysIn(p.year, p.month)) return null;
  if (i >= n) return p;
  if ((s[i] !== 'T' && s[i] !== ' ') || i === n - 1) return null;
  i++;
  if (!isDigit(s[i])) return null;
  p.hour = Number(s[i]);
  i++;
  let hour2 = false;
  if (isDigit(s[i])) {
    hour2 = true;
    p.hour = p.hour * 10 + Number(s[i]);
    i++;
    if (p.hour >= 24) return null;
  }
  if (i >= n) return hour2 ? p : null;
  let hms = false;
  if (s[i] === ':') {
    hms = true;
    i++;
    if (i >= n || !isDigit(s[i])) return null;
  } else if (!isDigit(s[i])) {
    if (!hour2) return null;
    return timezone(s, i, p);
  }
  p.minute = Number(s[i]);
  i++;
  if (isDigit(s[i])) {
    p.minute = p.minute * 10 + Number(s[i]);
    i++;
    if (p.minute >= 60) return null;
  } else if (!hms) return null;
  if (i >= n) return p;
  if (hms && s[i] === ':') {
    i++;
    if (i >= n || !isDigit(s[i])) return null;
  } else if (!(!hms && isDigit(s[i]))) {
    return timezone(s, i, p);
  }
  p.second = Number(s[i]);
  i++;
  if (isDigit(s[i])) {
    p.second = p.second * 10 + Number(s[i]);
    i++;
    if (p.second >= 60) return null;
  } else if (!hms) return null;
  if (s[i] !== '.') return timezone(s, i, p);
  i++;
  let frac = '';
  while (isDigit(s[i]) && frac.length < 18) frac += s[i++];
  const digits = frac.padEnd(9, '0');
  p.us = Number(digits.slice(0, 6));
  p.ns = Number(digits.slice(6, 9));
  return timezone(s, i, p);
}

function timezone(s: string, start: number, p: Parts): Parts | null {
  let i = start;
  const n = s.length;
  while (i < n && isSpace(s[i])) i++;
  if (i >= n) return p;
  if (s[i] === 'Z') {
    p.offset = 0;
    i++;
  } else if (s[i] === '+' || s[i] === '-') {
    const sign = s[i] === '-' ? -1 : 1;
    i++;
    let h: number;
    let m = 0;
    if (isDigit(s[i]) && isDigit(s[i + 1])) {
      h = Number(s.slice(i, i + 2));
      i += 2;
      if (h >= 24) return null;
    } else if (isDigit(s[i])) {
      h = Number(s[i]);
      i++;
    } else return null;
    if (i < n) {
      if (s[i] === ':') i++;
      if (isDigit(s[i]) && isDigit(s[i + 1])) {
        m = Number(s.slice(i, i + 2));
        i += 2;
        if (m >= 60) return null;
      } else if (isDigit(s[i])) {
        m = Number(s[i]);
        i++;
      } else return null;
    }
    p.offset = sign * (h * 60 + m);
  }
  while (i < n && isSpace(s[i])) i++;
  return i === n ? p : null;
}

/** pandas `_parse_delimited_date`: MM/DD/YYYY (DD/MM/YYYY when the month would be > 12), MM/YYYY. */
function parseDelimited(s: string): Parts | null {
  const m = /^(\d{1,2})([ /\-.])(\d{1,2})\2(\d{4})$/.exec(s);
  const base = { hour: 0, minute: 0, second: 0, us: 0, ns: 0, offset: null };
  if (m && s.length >= 8 && s.length <= 10) {
    let month = Number(m[1]);
    let day = Number(m[3]);
    const year = Number(m[4]);
    if (month > 12) [month, day] = [day, month];
    if (month < 1 || month > 12 || day < 1 || year < 1 || day > daysIn(year, month)) return null;
    return { year, month, day, ...base };
  }
  const my = /^(\d{1,2})([ /\-])(\d{4})$/.exec(s);
  if (my) {
    const month = Number(my[1]);
    const year = Number(my[3]);
    if (month < 1 || month > 12 || year < 1) return null;
    return { year, month, day: 1, ...base };
  }
  return null;
}

const MONTHS: Record<string, number> = {
  jan: 1, january: 1, feb: 2, february: 2, mar: 3, march: 3, apr: 4, april: 4, may: 5, jun: 6, june: 6,
  jul: 7, july: 7, aug: 8, august: 8, sep: 9, sept: 9, september: 9, oct: 10, october: 10, nov: 11,
  november: 11, dec: 12, december: 12,
};
const WEEKDAYS = new Set(['mon', 'monday', 'tue', 'tues', 'tuesday', 'wed', 'wednesday', 'thu', 'thur', 'thurs', 'thursday', 'fri', 'friday', 'sat', 'saturday', 'sun', 'sunday']);
const JUMP = new Set(['at', 'on', 'and', 'ad', 'm', 't', 'of', 'st', 'nd', 'rd', 'th']);

class DateParseError extends PyException {
  constructor(message: string) {
    super('ValueError', message);
  }
}

/** The dateutil forms described at the top of this file. */
function parseDateutil(s: string): Parts {
  const unknown = () => new DateParseError(`Unknown datetime string format, unable to parse: ${s}`);
  const tokens = s.match(/\d+(?:\.\d+)?|[A-Za-z]+|[^\sA-Za-z\d]/g) ?? [];
  let year: number | null = null;
  let month: number | null = null;
  let day: number | null = null;
  const nums: { v: number; len: number }[] = [];
  let hour: number | null = null;
  let minute = 0;
  let second = 0;
  let us = 0;
  let ampm: 'am' | 'pm' | null = null;
  let offset: number | null = null;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    const lowerT = t.toLowerCase();
    if (/^\d/.test(t)) {
      if (tokens[k + 1] === ':' && /^\d+$/.test(tokens[k + 2] ?? '')) {
        if (hour !== null) throw unknown();
        hour = Number(t);
        minute = Number(tokens[k + 2]);
        k += 2;
        if (tokens[k + 1] === ':' && /^\d+(?:\.\d+)?$/.test(tokens[k + 2] ?? '')) {
          const sec = tokens[k + 2]!;
          second = Math.trunc(Number(sec));
          us = sec.includes('.') ? Number(sec.split('.')[1]!.padEnd(6, '0').slice(0, 6)) : 0;
          k += 2;
        }
        continue;
      }
      const next = tokens[k + 1]?.toLowerCase();
      if ((next === 'am' || next === 'pm' || next === 'a' || next === 'p') && hour === null && !t.includes('.')) {
        hour = Number(t);
        continue;
      }
      if (t.includes('.')) throw unknown();
      nums.push({ v: Number(t), len: t.length });
      continue;
    }
    if (/^[A-Za-z]/.test(t)) {
      if (Object.hasOwn(MONTHS, lowerT)) {
        if (month !== null) throw unknown();
        month = MONTHS[lowerT]!;
      } else if (WEEKDAYS.has(lowerT) || JUMP.has(lowerT)) {
        continue;
      } else if (lowerT === 'am' || lowerT === 'pm' || ((lowerT === 'a' || lowerT === 'p') && tokens[k + 1] === '.')) {
        ampm = lowerT.startsWith('a') ? 'am' : 'pm';
        if (lowerT.length === 1) k += tokens[k + 2]?.toLowerCase() === 'm' ? 3 : 1;
      } else if (lowerT === 'z' || lowerT === 'utc' || lowerT === 'gmt') {
        offset = 0;
      } else throw unknown();
      continue;
    }
    if ((t === '+' || t === '-') && hour !== null && /^\d{1,4}$/.test(tokens[k + 1] ?? '')) {
      const sign = t === '-' ? -1 : 1;
      const a = tokens[k + 1]!;
      let h: number;
      let m = 0;
      if (a.length <= 2 && tokens[k + 2] === ':' && /^\d{2}$/.test(tokens[k + 3] ?? '')) {
        h = Number(a);
        m = Number(tokens[k + 3]);
        k += 3;
      } else {
        h = a.length <= 2 ? Number(a) : Number(a.slice(0, a.length - 2));
        m = a.length <= 2 ? 0 : Number(a.slice(-2));
        k += 1;
      }
      offset = sign * (h * 60 + m);
      continue;
    }
    if ([',', '.', '/', '-', ';', "'", ':'].includes(t)) continue;
    throw unknown();
  }
  if (ampm !== null) {
    if (hour === null || hour > 12) throw unknown();
    if (ampm === 'pm' && hour < 12) hour += 12;
    if (ampm === 'am' && hour === 12) hour = 0;
  }
  // year / month / day from the remaining numbers (dateutil's month-first order)
  const rest = [...nums];
  const yearAt = rest.findIndex((x) => x.len >= 3 || x.v > 31);
  if (yearAt >= 0) year = rest.splice(yearAt, 1)[0]!.v;
  if (month === null) {
    if (rest.length >= 2) {
      month = rest.shift()!.v;
      day = rest.shift()!.v;
    } else if (rest.length === 1) {
      if (year === null) throw unknown();
      month = rest.shift()!.v;
    }
  } else if (rest.length >= 1) {
    day = rest.shift()!.v;
  }
  if (rest.length === 1 && year === null) year = twoDigitYear(rest.shift()!.v);
  if (rest.length > 0 || (month === null && day === null && year === null && hour === null)) throw unknown();
  const p: Parts = { year: year ?? 1, month: month ?? 1, day: day ?? 1, hour: hour ?? 0, minute, second, us, ns: 0, offset };
  if (p.month < 1 || p.month > 12) throw new DateParseError(`month must be in 1..12: ${s}`);
  if (p.day < 1 || p.day > daysIn(p.year, p.month)) throw new DateParseError(`day is out of range for month: ${s}`);
  if (p.hour > 23) throw new DateParseError(`hour must be in 0..23: ${s}`);
  if (p.minute > 59) throw new DateParseError(`minute must be in 0..59: ${s}`);
  if (p.second > 59) throw new DateParseError(`second must be in 0..59: ${s}`);
  return p;
}

function twoDigitYear(y: number): number {
  // dateutil puts a two-digit year within 50 years of the current one
  const now = new Date().getUTCFullYear();
  const century = Math.floor(now / 100) * 100;
  let full = century + y;
  if (full >= now + 50) full -= 100;
  else if (full < now - 50) full += 100;
  return full;
}

const cache = new Map<string, Timestamp | PyException>();

/** `pd.Timestamp(value)`; throws ValueError / TypeError with pandas' texts. */
export function toTimestamp(value: Value): Timestamp {
  let v = value;
  if (typeof v === 'string') {
    let hit = cache.get(v);
    if (hit === undefined) {
      try {
        hit = parseString(v);
      } catch (e) {
        if (!(e instanceof PyException)) throw e;
        hit = e;
      }
      if (cache.size >= 10_000) cache.clear();
      if (!/^\s*(now|today)\s*$/i.test(v)) cache.set(v, hit);
    }
    if (hit instanceof PyException) throw hit;
    return hit;
  }
  if (v instanceof PyFloat) v = v.value;
  if (typeof v === 'number' && Number.isFinite(v)) {
    // a number is nanoseconds since the epoch
    const us = Math.trunc(v / 1000);
    const d = new Date(Math.floor(us / 1000));
    return { us, ns: Math.trunc(v - us * 1000), aware: false, date: d.toISOString().slice(0, 10) };
  }
  throw new PyException('TypeError', `Cannot convert input [${v === null ? 'None' : JSON.stringify(v)}] of type <class '${typeName(v)}'> to Timestamp`);
}

function parseString(s: string): Timestamp {
  const trimmed = s.trim();
  if (trimmed === '') throw new DateParseError(`Unknown datetime string format, unable to parse: ${s}`);
  if (/^(now|today)$/i.test(trimmed)) {
    const now = Date.now();
    return { us: now * 1000, ns: 0, aware: false, date: new Date(now).toISOString().slice(0, 10) };
  }
  const iso = parseIso(s);
  if (iso) return build(iso);
  // pandas: a plain number below 1000 is "not likely a datetime"
  if (/^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(s) && Number(s) < 1000) {
    throw new DateParseError(`Given date string "${s}" not likely a datetime`);
  }
  const delimited = parseDelimited(trimmed);
  if (delimited) return build(delimited);
  return build(parseDateutil(s));
}

/** Ordering of two timestamps; TypeError (pandas' text) when one is aware and the other naive. */
export function compareTimestamps(a: Timestamp, b: Timestamp): number {
  if (a.aware !== b.aware) throw new PyException('TypeError', 'Cannot compare tz-naive and tz-aware timestamps');
  return a.us !== b.us ? a.us - b.us : a.ns - b.ns;
}

// Python string and value semantics that the checks depend on.
//
// Strings are compared, sliced and reversed by code point (Python `str` indexing), whitespace is
// Python's `str.isspace()` set, and kwargs coming from JSON are handled the way Python would treat
// the equivalent values (truthiness, `<` between numbers only, bool being an int).
import { NgError } from '@nemo-gym/core';

/** Thrown where Python would raise (TypeError, AttributeError, ValueError, ...). */
export class PyError extends NgError {
  constructor(
    readonly pyType: string,
    message: string,
  ) {
    super('NG_ERR_PY_EXCEPTION', `${pyType}: ${message}`);
    this.name = 'PyError';
  }
}

/** Python `str.isspace()` characters (also what `\s` matches in a `re` str pattern). */
export const PY_WS_CLASS = '\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const WS_SET = new Set<number>([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
  0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

export function isPySpace(ch: string): boolean {
  return WS_SET.has(ch.codePointAt(0) ?? -1);
}

const WS_RUN = new RegExp(`[${PY_WS_CLASS}]+`, 'u');
const WS_RUN_G = new RegExp(`[${PY_WS_CLASS}]+`, 'gu');
const LEADING_WS = new RegExp(`^[${PY_WS_CLASS}]+`, 'u');
const TRAILING_WS = new RegExp(`[${PY_WS_CLASS}]+$`, 'u');

/** `s.split()` with no arguments. */
export function pySplit(s: string): string[] {
  if (!WS_RUN.test(s)) return s.length ? [s] : [];
  return s.split(WS_RUN_G).filter((p) => p.length > 0);
}

/** `s.strip()`, or `s.strip(chars)` when chars is given. */
export function pyStrip(s: string, chars?: string): string {
  return pyRstrip(pyLstrip(s, chars), chars);
}

export function pyLstrip(s: string, chars?: string): string {
  if (chars === undefined) return s.replace(LEADING_WS, '');
  const set = new Set(Array.from(chars));
  const cps = Array.from(s);
  let i = 0;
  while (i < cps.length && set.has(cps[i]!)) i++;
  return cps.slice(i).join('');
}

export function pyRstrip(s: string, chars?: string): string {
  if (chars === undefined) return s.replace(TRAILING_WS, '');
  const set = new Set(Array.from(chars));
  const cps = Array.from(s);
  let j = cps.length;
  while (j > 0 && set.has(cps[j - 1]!)) j--;
  return cps.slice(0, j).join('');
}

/** `s.lower()` (full Unicode lowercase mapping, like Python). */
export function pyLower(s: string): string {
  return s.toLowerCase();
}

const CASED_UPPER = /[\p{Uppercase}]/u;
const CASED_LOWER = /[\p{Lowercase}]/u;
const TITLE = /\p{Lt}/u;

/** `s.isupper()`: at least one cased character and no lowercase/titlecase one. */
export function pyIsUpper(s: string): boolean {
  let cased = false;
  for (const ch of s) {
    if (CASED_LOWER.test(ch) || TITLE.test(ch)) return false;
    if (!cased && CASED_UPPER.test(ch)) cased = true;
  }
  return cased;
}

/** `s.islower()`: at least one cased character and no uppercase/titlecase one. */
export function pyIsLower(s: string): boolean {
  let cased = false;
  for (const ch of s) {
    if (CASED_UPPER.test(ch) || TITLE.test(ch)) return false;
    if (!cased && CASED_LOWER.test(ch)) cased = true;
  }
  return cased;
}

/** Number of code points (`len(s)`). */
export function pyLen(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Python truthiness of a JSON value. */
export function pyTruthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false) return false;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}

function pyTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'string') return 'str';
  if (Array.isArray(v)) return 'list';
  return 'dict';
}

/** A value usable in arithmetic comparisons (int, float, bool); anything else raises TypeError. */
export function pyNum(v: unknown, what = 'value'): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  throw new PyError('TypeError', `'<' not supported between '${pyTypeName(v)}' (${what}) and 'int'`);
}

/** `a < b` for Python numbers; raises TypeError on other types. */
export function pyLt(a: unknown, b: unknown): boolean {
  return pyNum(a) < pyNum(b);
}

/** `a == b` for JSON values with Python semantics (True == 1, deep list/dict equality). */
export function pyEq(a: unknown, b: unknown): boolean {
  const numLike = (x: unknown) => typeof x === 'number' || typeof x === 'boolean';
  if (numLike(a) && numLike(b)) return pyNum(a) === pyNum(b);
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => pyEq(x, b[i]));
  }
  if (typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a as object);
    const kb = Object.keys(b as object);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => k in (b as object) && pyEq((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}

/** A Python int usable as an index (int or bool); floats and others raise TypeError. */
export function pyIndexValue(v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  throw new PyError('TypeError', `indices must be integers, not ${pyTypeName(v)}`);
}

/** `seq[i]` with Python negative indexing; raises IndexError when out of range. */
export function pyIndex<T>(seq: readonly T[], i: number): T {
  const j = i < 0 ? seq.length + i : i;
  if (j < 0 || j >= seq.length) throw new PyError('IndexError', 'list index out of range');
  return seq[j]!;
}

/** `s[start:end]` on code points with Python slice clamping and negative indices. */
export function pySliceStr(s: string, start: number, end: number): string {
  const cps = Array.from(s);
  const n = cps.length;
  const norm = (x: number) => (x < 0 ? Math.max(0, n + x) : Math.min(n, x));
  const a = norm(start);
  const b = norm(end);
  return a < b ? cps.slice(a, b).join('') : '';
}

/** Requires a Python str (for `.strip()`, `.lower()` on kwargs); raises AttributeError otherwise. */
export function pyStr(v: unknown, what: string): string {
  if (typeof v === 'string') return v;
  throw new PyError('AttributeError', `'${pyTypeName(v)}' object (${what}) has no attribute 'strip'`);
}

/** Code-point order comparison, as Python sorts strings. */
export function pyStrCompare(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx - cy;
  }
}

/** Python `json.loads` acceptance: JSON plus the NaN/Infinity/-Infinity literals, nesting limited. */
export function pyJsonLoads(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      // CPython's scanner recurses per level and stops near its recursion limit (RecursionError).
      if (depth > 990) return false;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  try {
    JSON.parse(text);
    return true;
  } catch {
    // Python's decoder also takes NaN, Infinity and -Infinity as values.
    if (!/NaN|Infinity/.test(text)) return false;
    try {
      JSON.parse(replaceNonFiniteOutsideStrings(text));
      return true;
    } catch {
      return false;
    }
  }
}

function replaceNonFiniteOutsideStrings(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    // `null` stands in for the value; like the original word it is invalid next to digits or a sign.
    if (text.startsWith('-Infinity', i)) {
      out += 'null';
      i += 9;
    } else if (text.startsWith('Infinity', i)) {
      out += 'null';
      i += 8;
    } else if (text.startsWith('NaN', i)) {
      out += 'null';
      i += 3;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/**
 * Python `str` methods with Python's semantics.
 *
 * Python strings are sequences of code points (JavaScript's are UTF-16 code units), Python's
 * whitespace is the `str.isspace()` set (JavaScript's `\s` adds U+FEFF and lacks U+001C–U+001F and
 * U+0085), and Python orders strings by code point. Every server that mirrors a Python check uses
 * these helpers instead of the nearest JavaScript method.
 */

/**
 * Python's whitespace (`str.isspace()`, `str.split()`, `str.strip()` and `\s` in a `re` str pattern)
 * as the body of a RegExp character class; valid with and without the `u` flag.
 */
export const PY_WHITESPACE = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

/** Whether a UTF-16 code unit is Python whitespace (every Python whitespace character is in the BMP). */
function isSpaceCode(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c >= 0x1c;
  if (c < 0x85) return false;
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/** Python `s.split()` with no arguments: runs of whitespace separate, empty pieces dropped. */
export function pySplit(s: string): string[] {
  const out: string[] = [];
  const n = s.length;
  let i = 0;
  while (i < n) {
    while (i < n && isSpaceCode(s.charCodeAt(i))) i++;
    if (i >= n) break;
    const start = i;
    while (i < n && !isSpaceCode(s.charCodeAt(i))) i++;
    out.push(s.slice(start, i));
  }
  return out;
}

function stripSet(chars: string): Set<string> {
  return new Set(Array.from(chars));
}

/** Python `s.lstrip()`, or `s.lstrip(chars)` (each code point of `chars` is stripped). */
export function pyLstrip(s: string, chars?: string): string {
  if (chars === undefined) {
    let i = 0;
    while (i < s.length && isSpaceCode(s.charCodeAt(i))) i++;
    return i === 0 ? s : s.slice(i);
  }
  const set = stripSet(chars);
  const cps = Array.from(s);
  let i = 0;
  while (i < cps.length && set.has(cps[i]!)) i++;
  return cps.slice(i).join('');
}

/** Python `s.rstrip()`, or `s.rstrip(chars)`. */
export function pyRstrip(s: string, chars?: string): string {
  if (chars === undefined) {
    let j = s.length;
    while (j > 0 && isSpaceCode(s.charCodeAt(j - 1))) j--;
    return j === s.length ? s : s.slice(0, j);
  }
  const set = stripSet(chars);
  const cps = Array.from(s);
  let j = cps.length;
  while (j > 0 && set.has(cps[j - 1]!)) j--;
  return cps.slice(0, j).join('');
}

/** Python `s.strip()`, or `s.strip(chars)`. */
export function pyStrip(s: string, chars?: string): string {
  if (chars === undefined) {
    let i = 0;
    let j = s.length;
    while (i < j && isSpaceCode(s.charCodeAt(i))) i++;
    while (j > i && isSpaceCode(s.charCodeAt(j - 1))) j--;
    return i === 0 && j === s.length ? s : s.slice(i, j);
  }
  return pyRstrip(pyLstrip(s, chars), chars);
}

/** Python `s.lower()` (full Unicode lowercase mapping, as Python's). */
export function pyLower(s: string): string {
  return s.toLowerCase();
}

const CASED_UPPER = /\p{Uppercase}/u;
const CASED_LOWER = /\p{Lowercase}/u;
const TITLE = /\p{Lt}/u;
const ALPHA = /^\p{L}+$/u;

/** Python `s.isupper()`: at least one cased character and no lowercase or titlecase one. */
export function pyIsUpper(s: string): boolean {
  let cased = false;
  for (const ch of s) {
    if (CASED_LOWER.test(ch) || TITLE.test(ch)) return false;
    if (!cased && CASED_UPPER.test(ch)) cased = true;
  }
  return cased;
}

/** Python `s.islower()`: at least one cased character and no uppercase or titlecase one. */
export function pyIsLower(s: string): boolean {
  let cased = false;
  for (const ch of s) {
    if (CASED_UPPER.test(ch) || TITLE.test(ch)) return false;
    if (!cased && CASED_LOWER.test(ch)) cased = true;
  }
  return cased;
}

/** Python `s.isalpha()`: non-empty and every character a letter (categories Lu, Ll, Lt, Lm, Lo). */
export function pyIsAlpha(s: string): boolean {
  return ALPHA.test(s);
}

/** Python `len(s)`: the number of code points. */
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

/** Python `s[start:end]` on code points, with Python's clamping and negative indices. */
export function pySliceStr(s: string, start: number, end: number): string {
  const cps = Array.from(s);
  const n = cps.length;
  const norm = (x: number) => (x < 0 ? Math.max(0, n + x) : Math.min(n, x));
  const a = norm(start);
  const b = norm(end);
  return a < b ? cps.slice(a, b).join('') : '';
}

/** Python string order (by code point; JavaScript's `<` compares UTF-16 code units): negative, 0 or positive. */
export function pyStrCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // a surrogate (part of a code point above U+FFFF) sorts after every other BMP character
    const xs = x >= 0xd800 && x < 0xe000;
    const ys = y >= 0xd800 && y < 0xe000;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

const DECIMAL_DIGIT = /\p{Nd}/u;
const DIGITS = '[0-9](?:_?[0-9])*';
const FLOAT_SYNTAX = new RegExp(`^[+-]?(?:(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf|infinity|nan)$`, 'i');

/**
 * Maps every Unicode decimal digit to its ASCII form (Python's `float()` and `int()` accept them).
 * Unicode encodes decimal digits in runs of ten starting at zero, so a digit's value is its
 * distance from the start of its run, modulo 10.
 */
function asciiDigits(s: string): string {
  if (/^[\x00-\x7f]*$/.test(s)) return s;
  let out = '';
  for (const ch of s) {
    if (ch.charCodeAt(0) < 0x80 || !DECIMAL_DIGIT.test(ch)) {
      out += ch;
      continue;
    }
    let cp = ch.codePointAt(0)!;
    let offset = 0;
    while (DECIMAL_DIGIT.test(String.fromCodePoint(cp - 1))) {
      cp -= 1;
      offset += 1;
    }
    out += String(offset % 10);
  }
  return out;
}

/** Python `float(s)` for a str; `null` where Python raises ValueError. */
export function pyFloatFromStr(s: string): number | null {
  const text = asciiDigits(pyStrip(s));
  if (!FLOAT_SYNTAX.test(text)) return null;
  const lower = text.toLowerCase().replace(/^\+/, '');
  if (lower === 'inf' || lower === 'infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  if (lower === 'nan' || lower === '-nan') return NaN;
  return Number(text.replace(/_/g, ''));
}

const INT_SYNTAX = /^[+-]?[0-9](?:_?[0-9])*$/;

/** Python `int(s)` (base 10) for a str; `null` where Python raises ValueError. */
export function pyIntFromStr(s: string): number | null {
  const text = asciiDigits(pyStrip(s));
  return INT_SYNTAX.test(text) ? Number(text.replace(/_/g, '')) : null;
}

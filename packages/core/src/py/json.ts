/**
 * Python-compatible formatting. Upstream writes JSON with Python's `json.dumps`, whose output
 * differs from `JSON.stringify` in separators, ASCII escaping and float formatting; word counts,
 * metrics files and model-visible tool outputs depend on those bytes.
 */

/** Marks a number that Python holds as a float, so that `3` is written as `3.0`. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** Python's whitespace for `str.split()` / `str.strip()` (differs from JS `\s`: no U+FEFF, adds U+001C–U+001F, U+0085). */
export const PY_WHITESPACE = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const SPLIT_RE = new RegExp(`[${PY_WHITESPACE}]+`, 'u');
const STRIP_RE = new RegExp(`^[${PY_WHITESPACE}]+|[${PY_WHITESPACE}]+$`, 'gu');

/** Python `s.split()` with no arguments. */
export function pySplit(s: string): string[] {
  return s.split(SPLIT_RE).filter((part) => part.length > 0);
}

/** Python `s.strip()` with no arguments. */
export function pyStrip(s: string): string {
  return s.replace(STRIP_RE, '');
}

/** Python `repr(float)`: shortest round-trip digits, `.0` on integral values, exponent outside [1e-4, 1e16). */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mant, expPart] = Math.abs(x).toExponential().split('e') as [string, string];
  const exp = Number(expPart);
  const digits = mant.replace('.', '');
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    const intLen = exp + 1;
    if (digits.length <= intLen) return `${sign}${digits}${'0'.repeat(intLen - digits.length)}.0`;
    return `${sign}${digits.slice(0, intLen)}.${digits.slice(intLen)}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const e = Math.abs(exp) < 10 ? `0${Math.abs(exp)}` : String(Math.abs(exp));
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${e}`;
}

/** Python `json.dumps` of a float (`NaN`, `Infinity` spelled as Python's encoder does). */
function pyJsonFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return pyFloatRepr(x);
}

function pyJsonInt(x: number): string {
  return Math.abs(x) < 1e21 ? String(x) : BigInt(x).toString();
}

const ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** Python's JSON string encoding (`ensure_ascii` escapes everything above U+007F as \uXXXX). */
export function pyJsonString(s: string, ensureAscii = true): string {
  const re = ensureAscii ? /["\\\u0000-\u001f\u007f-\uffff]/g : /["\\\u0000-\u001f]/g;
  return `"${s.replace(re, (ch) => {
    const known = ESCAPES[ch];
    if (known) return known;
    const code = ch.charCodeAt(0);
    if (code === 0x7f && !ensureAscii) return ch;
    return `\\u${code.toString(16).padStart(4, '0')}`;
  })}"`;
}

export interface PyJsonDumpsOptions {
  /** Python's `separators`; default `(', ', ': ')`. */
  separators?: [string, string];
  /** Python's `ensure_ascii`; default true. */
  ensureAscii?: boolean;
  /** Python's `indent`; default none (single line). */
  indent?: number;
  /**
   * How plain JS numbers print: `auto` (default) prints integral ones as ints; `float` prints
   * every number as a float, for lossless values where ints are bigints.
   */
  numbers?: 'auto' | 'float';
}

/**
 * Python `json.dumps(value, ...)`. Integral numbers print as ints unless wrapped in `PyFloat` (or
 * `numbers: 'float'`); other numbers print with Python's float repr; bigints print exactly. A Map
 * is a dict in insertion order; `undefined` members are left out.
 */
export function pyJsonDumps(value: unknown, options: PyJsonDumpsOptions = {}): string {
  const ensureAscii = options.ensureAscii ?? true;
  const indent = options.indent;
  const [itemSep, keySep] = options.separators ?? (indent !== undefined ? [',', ': '] : [', ', ': ']);
  const allFloats = options.numbers === 'float';

  const encode = (v: unknown, depth: number): string => {
    if (v === null || v === undefined) return 'null';
    if (v instanceof PyFloat) return pyJsonFloat(v.value);
    switch (typeof v) {
      case 'boolean':
        return v ? 'true' : 'false';
      case 'number':
        return Number.isInteger(v) && !allFloats ? pyJsonInt(v) : pyJsonFloat(v);
      case 'bigint':
        return v.toString();
      case 'string':
        return pyJsonString(v, ensureAscii);
      default:
        break;
    }
    const pad = indent !== undefined ? `\n${' '.repeat(indent * (depth + 1))}` : '';
    const padEnd = indent !== undefined ? `\n${' '.repeat(indent * depth)}` : '';
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      return `[${pad}${v.map((item) => encode(item, depth + 1)).join(itemSep + pad)}${padEnd}]`;
    }
    const all = v instanceof Map ? [...(v as Map<string, unknown>).entries()] : Object.entries(v as Record<string, unknown>);
    const entries = all.filter(([, val]) => val !== undefined);
    if (entries.length === 0) return '{}';
    return `{${pad}${entries
      .map(([k, val]) => `${pyJsonString(k, ensureAscii)}${keySep}${encode(val, depth + 1)}`)
      .join(itemSep + pad)}${padEnd}}`;
  };
  return encode(value, 0);
}

/**
 * Python `round(x, ndigits)`: correctly rounded on the exact binary value, ties to even.
 * (`Math.round(x * 10**n) / 10**n` is wrong on both counts.)
 */
export function pyRound(x: number, ndigits = 0): number {
  if (!Number.isFinite(x)) return x;
  if (Math.abs(x) >= 1e21 || ndigits > 20) return x;
  if (ndigits < 0) {
    const f = 10 ** -ndigits;
    return pyRound(x / f, 0) * f;
  }
  const fixed = x.toFixed(ndigits);
  const exact = x.toFixed(Math.min(100, ndigits + 60));
  const tail = exact.slice(exact.indexOf('.') + 1 + ndigits);
  if (ndigits === 0 ? /^5(0*)$/.test(exact.split('.')[1] ?? '') : /^5(0*)$/.test(tail)) {
    // An exact tie: toFixed rounded away from zero; Python rounds to the even neighbour.
    const truncated = ndigits === 0 ? exact.split('.')[0]! : exact.slice(0, exact.indexOf('.') + 1 + ndigits);
    const lastDigit = Number(truncated.replace('-', '').replace('.', '').slice(-1));
    if (lastDigit % 2 === 0) return Number(truncated) === 0 && x < 0 ? -0 : Number(truncated);
  }
  return Number(fixed);
}

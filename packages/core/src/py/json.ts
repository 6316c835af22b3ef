/**
 * Python-compatible formatting. Upstream writes JSON with Python's `json.dumps`, whose output
 * differs from `JSON.stringify` in separators, ASCII escaping and float formatting; word counts,
 * metrics files and model-visible tool outputs depend on those bytes.
 */

import { NgError, errorMessage } from '../errors.js';

/** Marks a number that Python holds as a float, so that `3` is written as `3.0`. */
export class PyFloat {
  constructor(readonly value: number) {}
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

/**
 * Python `json.loads`, lossless.
 *
 * Python keeps `1` (int) and `1.0` (float) apart, keeps integers of any size exactly and keeps
 * object keys in file order. `JSON.parse` loses all three, so prepared files and metrics would
 * differ from the Python implementation's. Here a parsed value is:
 *   int -> bigint, float -> number, object -> Map (insertion order, duplicate keys: last value
 *   wins at the first key's position, as a Python dict does), array -> array.
 * `NaN`, `Infinity` and `-Infinity` are accepted, as Python's `json.loads` does.
 */

export type PyValue = null | boolean | string | number | bigint | PyValue[] | PyDict;
export type PyDict = Map<string, PyValue>;

export class PyJsonDecodeError extends NgError {
  override readonly name = 'PyJsonDecodeError';
  constructor(
    readonly reason: string,
    /** 0-based character offset in the text. */
    readonly pos: number,
  ) {
    super('NG_ERR_PY_JSON_DECODE', errorMessage('NG_ERR_PY_JSON_DECODE', reason, pos));
  }
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

export interface PyJsonLoadsOptions {
  /**
   * Most containers open at once. CPython's decoder recurses per level and raises RecursionError
   * near its recursion limit (about 990 levels in a fresh interpreter); the default, 10000, only
   * guards this parser's stack.
   */
  maxNesting?: number;
}

/** Python `json.loads(text)` into the lossless representation; throws `PyJsonDecodeError`. */
export function pyJsonLoads(text: string, options: PyJsonLoadsOptions = {}): PyValue {
  const maxNesting = options.maxNesting ?? Infinity;
  let i = 0;
  const n = text.length;

  const fail = (reason: string, at = i): never => {
    throw new PyJsonDecodeError(reason, at);
  };
  const skipWs = () => {
    while (i < n && WS.has(text.charCodeAt(i))) i++;
  };

  const parseString = (): string => {
    // text[i] === '"'
    i++;
    let out = '';
    let start = i;
    for (;;) {
      if (i >= n) fail('Unterminated string starting', start - 1);
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c === 0x5c) {
        out += text.slice(start, i);
        i++;
        if (i >= n) fail('Unterminated string starting', start - 1);
        const e = text[i];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            const hex = text.slice(i + 1, i + 5);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('Invalid \\uXXXX escape', i - 1);
            out += String.fromCharCode(parseInt(hex, 16));
            i += 4;
            break;
          }
          default:
            fail('Invalid \\escape', i - 1);
        }
        i++;
        start = i;
        continue;
      }
      if (c < 0x20) fail('Invalid control character at', i);
      i++;
    }
  };

  const NUM_RE = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;

  const parseValue = (depth: number): PyValue => {
    if (depth > 10000) fail('Too deeply nested');
    skipWs();
    if (i >= n) fail('Expecting value');
    const c = text[i]!;
    if (c === '"') return parseString();
    if (c === '{') {
      if (depth >= maxNesting) fail('Too deeply nested');
      i++;
      const obj: PyDict = new Map();
      skipWs();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        skipWs();
        if (text[i] !== '"') fail('Expecting property name enclosed in double quotes');
        const key = parseString();
        skipWs();
        if (text[i] !== ':') fail("Expecting ':' delimiter");
        i++;
        obj.set(key, parseValue(depth + 1));
        skipWs();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return obj;
        }
        fail("Expecting ',' delimiter");
      }
    }
    if (c === '[') {
      if (depth >= maxNesting) fail('Too deeply nested');
      i++;
      const arr: PyValue[] = [];
      skipWs();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(parseValue(depth + 1));
        skipWs();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return arr;
        }
        fail("Expecting ',' delimiter");
      }
    }
    if (text.startsWith('null', i)) {
      i += 4;
      return null;
    }
    if (text.startsWith('true', i)) {
      i += 4;
      return true;
    }
    if (text.startsWith('false', i)) {
      i += 5;
      return false;
    }
    if (text.startsWith('NaN', i)) {
      i += 3;
      return NaN;
    }
    if (text.startsWith('Infinity', i)) {
      i += 8;
      return Infinity;
    }
    if (text.startsWith('-Infinity', i)) {
      i += 9;
      return -Infinity;
    }
    NUM_RE.lastIndex = i;
    const m = NUM_RE.exec(text);
    if (!m) return fail('Expecting value');
    i = NUM_RE.lastIndex;
    if (m[1] === undefined && m[2] === undefined) return BigInt(m[0]);
    return Number(m[0]);
  };

  const value = parseValue(0);
  skipWs();
  if (i < n) fail('Extra data');
  return value;
}

/** Convert a lossless value to plain JS (Map -> object, bigint -> number) for schema validation. */
export function toPlain(v: PyValue): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, val] of v) {
      // defineProperty keeps a "__proto__" key an ordinary own key.
      Object.defineProperty(out, k, { value: toPlain(val), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return v;
}

/** `json.loads(text)` as plain JS values (dict -> object, int -> number): JSON.parse, and Python's grammar (NaN, Infinity) where JSON.parse refuses. */
export function pyJsonLoadsPlain(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return toPlain(pyJsonLoads(text));
  }
}

/** Nesting at which CPython's `json.loads` stops with RecursionError (its default recursion limit, less the caller's frames). */
const CPYTHON_JSON_MAX_NESTING = 990;

/** Whether `json.loads(text)` succeeds (nesting past CPython's recursion limit fails). */
export function pyJsonLoadable(text: string): boolean {
  try {
    pyJsonLoads(text, { maxNesting: CPYTHON_JSON_MAX_NESTING });
    return true;
  } catch {
    return false;
  }
}

/**
 * Lossless JSON for data files, with Python's `json` semantics.
 *
 * Python keeps `1` (int) and `1.0` (float) apart, keeps integers of any size exactly and keeps
 * object keys in file order. `JSON.parse` loses all three, so prepared files and metrics would
 * differ from the Python implementation's. Here a parsed value is:
 *   int -> bigint, float -> number, object -> Map (insertion order, duplicate keys: last value
 *   wins at the first key's position, as a Python dict does), array -> array.
 * `NaN`, `Infinity` and `-Infinity` are accepted, as Python's `json.loads` does.
 */
import { NgError, errorMessage } from '../errors.js';
import { pyJsonDumps } from '../py/index.js';

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

/** Python `json.loads(text)` into the lossless representation. */
export function pyJsonLoads(text: string): PyValue {
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

export interface PyDumpsOptions {
  /** Python's `indent`; omitted = one line with `", "` / `": "` separators. */
  indent?: number;
}

/**
 * Python `json.dumps(value)` (ensure_ascii, default separators; with `indent`, Python's `","`
 * item separator and newlines) of a lossless value. Plain objects are accepted as dicts and plain
 * numbers as floats, so validated (plain) objects can be dumped too.
 */
export function pyDumps(value: unknown, options: PyDumpsOptions = {}): string {
  return pyJsonDumps(value, { indent: options.indent, numbers: 'float' });
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

/**
 * Number of whitespace-separated words in Python's `json.dumps(value)` (default separators,
 * ASCII escaping), counted without building the text. In that output the only whitespace is the
 * space: separators are `", "` and `": "`, and every other whitespace character inside strings is
 * escaped. So a string contributes a space wherever it holds a literal space, and nothing else.
 */
export function countDumpWords(value: unknown): number {
  let words = 0;
  let inWord = false;
  const solid = () => {
    if (!inWord) {
      words++;
      inWord = true;
    }
  };
  const str = (s: string) => {
    solid(); // opening quote
    let from = 0;
    for (;;) {
      const sp = s.indexOf(' ', from);
      if (sp === -1) break;
      if (sp > from) solid();
      inWord = false;
      from = sp + 1;
    }
    solid(); // rest of the text and the closing quote
  };
  const walk = (v: unknown): void => {
    if (v === null || v === undefined || typeof v !== 'object') {
      if (typeof v === 'string') str(v);
      else solid();
      return;
    }
    solid(); // "[" or "{"
    if (Array.isArray(v)) {
      v.forEach((item, k) => {
        if (k > 0) inWord = false; // ", "
        walk(item);
        solid(); // "," or "]"
      });
      if (v.length === 0) solid();
      return;
    }
    const entries: [string, unknown][] =
      v instanceof Map ? [...(v as Map<string, unknown>).entries()] : Object.entries(v as Record<string, unknown>);
    let k = 0;
    for (const [key, val] of entries) {
      if (val === undefined) continue;
      if (k++ > 0) inWord = false; // ", "
      str(key);
      solid(); // ":"
      inWord = false; // " "
      walk(val);
      solid(); // "," or "}"
    }
    if (k === 0) solid();
  };
  walk(value);
  return words;
}

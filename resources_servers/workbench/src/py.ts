/**
 * The Python value semantics the workplace tools depend on, for JSON-shaped values.
 *
 * Tool arguments arrive as JSON, table cells are strings read from CSV (or whatever a tool
 * stored), and upstream's tools treat them with plain Python operators: truthiness, `==`, `in`,
 * `<`/`>=`, `int()`, `str()`, `.lower()`, f-strings. Errors carry Python's exception text,
 * because the tool route feeds `str(e)` back to the model.
 *
 * Value mapping: JSON null / a missing cell = None (or NaN: both print as JSON null and both are
 * "missing" to pandas); a JS number is a Python int when integral and a float otherwise, unless it
 * is wrapped in `PyFloat` (a value Python holds as a float, e.g. `4.0`).
 */
import { PyException, PyFloat, pyFloatRepr, pyIntFromStr, pyNumber, pyStrCompare, pyStrRepr, pyTruthy, pyTypeName } from '@nemo-gym/core/py';

export { PyFloat };

/** Python exceptions raised by the tools: core's PyException (`pyType`, message = `str(e)`). */
export { PyException };

export type Value = unknown;

export function isMissing(v: Value): boolean {
  return v === null || v === undefined || (typeof v === 'number' && Number.isNaN(v)) || (v instanceof PyFloat && Number.isNaN(v.value));
}

/** Python `type(v).__name__`, `bool(v)` (core/py). */
export { pyTruthy as truthy, pyTypeName as typeName };

/** The number behind an int, float or bool; undefined for anything else. */
export function numeric(v: Value): number | undefined {
  return pyNumber(v) ?? undefined;
}

function floatStr(x: number): string {
  return pyFloatRepr(x);
}

/** Python `repr(v)`. */
export function repr(v: Value): string {
  if (typeof v === 'string') return pyStrRepr(v);
  if (Array.isArray(v)) return `[${v.map(repr).join(', ')}]`;
  if (v !== null && typeof v === 'object' && !(v instanceof PyFloat)) {
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${pyStrRepr(k)}: ${repr(x)}`)
      .join(', ')}}`;
  }
  return str(v);
}

/** Python `str(v)` (also what an f-string writes). A missing cell read from CSV is NaN: `nan`. */
export function str(v: Value): string {
  if (v === undefined) return 'nan';
  if (v === null) return 'None';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : floatStr(v);
  if (v instanceof PyFloat) return floatStr(v.value);
  return repr(v);
}

/** Python `==` between two JSON-shaped values. */
export function eq(a: Value, b: Value): boolean {
  if (a === b) return a === a; // NaN != NaN
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined && na === nb;
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (typeof a === 'string' || typeof b === 'string') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => eq(x, b[i]));
  }
  const ka = Object.keys(a as object);
  const ob = b as Record<string, unknown>;
  if (ka.length !== Object.keys(ob).length) return false;
  return ka.every((k) => Object.hasOwn(ob, k) && eq((a as Record<string, unknown>)[k], ob[k]));
}

export type CompareOp = '<' | '<=' | '>' | '>=';

function applyOp(c: number, op: CompareOp): boolean {
  switch (op) {
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    default:
      return c >= 0;
  }
}

/** Python `a <op> b` for str/int/float/bool; TypeError otherwise, with Python's text. */
export function compare(a: Value, b: Value, op: CompareOp): boolean {
  if (typeof a === 'string' && typeof b === 'string') return applyOp(pyStrCompare(a, b), op);
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) {
    if (Number.isNaN(na) || Number.isNaN(nb)) return false;
    return applyOp(na < nb ? -1 : na > nb ? 1 : 0, op);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (!eq(a[i], b[i])) return compare(a[i], b[i], op);
    }
    return applyOp(a.length - b.length, op);
  }
  throw new PyException('TypeError', `'${op}' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`);
}

/** Python `item in container`. */
export function contains(container: Value, item: Value): boolean {
  if (typeof container === 'string') {
    if (typeof item !== 'string') throw new PyException('TypeError', `'in <string>' requires string as left operand, not ${pyTypeName(item)}`);
    return container.includes(item);
  }
  if (Array.isArray(container)) return container.some((x) => eq(x, item));
  if (container !== null && typeof container === 'object' && !(container instanceof PyFloat)) {
    if (typeof item === 'string') return Object.hasOwn(container, item);
    if (Array.isArray(item) || (item !== null && typeof item === 'object' && !(item instanceof PyFloat))) {
      throw new PyException('TypeError', `unhashable type: '${pyTypeName(item)}'`);
    }
    return false;
  }
  throw new PyException('TypeError', `argument of type '${pyTypeName(container)}' is not iterable`);
}

/** Python `v.lower()`: only a str has the method. */
export function lower(v: Value): string {
  if (typeof v !== 'string') throw new PyException('AttributeError', `'${pyTypeName(v)}' object has no attribute 'lower'`);
  return v.toLowerCase();
}

/** Python `int(v)` (base 10). */
export function toInt(v: Value): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  const n = typeof v === 'number' ? v : v instanceof PyFloat ? v.value : undefined;
  if (n !== undefined) {
    if (Number.isNaN(n)) throw new PyException('ValueError', 'cannot convert float NaN to integer');
    if (!Number.isFinite(n)) throw new PyException('OverflowError', 'cannot convert float infinity to integer');
    return Math.trunc(n);
  }
  if (typeof v === 'string') {
    const n = pyIntFromStr(v);
    if (n !== null) return n;
    throw new PyException('ValueError', `invalid literal for int() with base 10: ${pyStrRepr(v)}`);
  }
  throw new PyException('TypeError', `int() argument must be a string, a bytes-like object or a real number, not '${pyTypeName(v)}'`);
}

/** Python `str.zfill(width)`. */
export function zfill(s: string, width: number): string {
  if (s.length >= width) return s;
  const sign = s[0] === '-' || s[0] === '+' ? s[0] : '';
  return sign + '0'.repeat(width - s.length) + s.slice(sign.length);
}

/** Python `str.isdigit()` (ASCII digits plus the other Unicode digit characters). */
export function isDigitStr(s: string): boolean {
  return s.length > 0 && /^[\p{Nd}\u00b2\u00b3\u00b9\u2070-\u2079\u2080-\u2089\u2460-\u2468\u2474-\u247c\u2488-\u2490\u24ea\u24f5-\u24fd\u24ff\u2776-\u277e\u2780-\u2788\u278a-\u2792]+$/u.test(s);
}

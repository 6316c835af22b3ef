/**
 * Python's operations on values decoded from JSON (`None`, `bool`, `int`/`float`, `str`, `list`,
 * `dict`; `undefined` is an absent field, read as `None`; a `PyFloat` is a float even when it is
 * integral): type names, truthiness, `str()`, `==`,
 * `<`, `float()`, iteration and indexing, raising what CPython raises with CPython's message.
 */
import { PyException } from './exception.js';
import { PyFloat } from './json.js';
import { pyRepr } from './repr.js';
import { pyFloatFromStr, pyStrCompare } from './str.js';

/** `type(v).__name__` of a JSON value (an integral number is an `int`). */
export function pyTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (v instanceof PyFloat) return 'float';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'string') return 'str';
  if (Array.isArray(v)) return 'list';
  return 'dict';
}

/** `bool(v)`: None, False, 0, "", [] and {} are false (NaN is true). */
export function pyTruthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false) return false;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (v instanceof PyFloat) return v.value !== 0;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** `str(v)`: a str is itself; everything else prints as its `repr()` (a dict as `{'k': 'v'}`, not as JSON). */
export function pyStr(v: unknown): string {
  return typeof v === 'string' ? v : pyRepr(v);
}

/** The number behind an int, float or bool (`True` is 1); `null` for every other type. */
export function pyNumber(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (v instanceof PyFloat) return v.value;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null;
}

function isDict(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof PyFloat);
}

/** `a == b`: numbers and bools compare by value (`True == 1 == 1.0`, NaN never equal), lists and dicts deeply, nothing else across types. */
export function pyEq(a: unknown, b: unknown): boolean {
  const x = pyNumber(a);
  const y = pyNumber(b);
  if (x !== null || y !== null) return x !== null && y !== null && x === y;
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => pyEq(item, b[i]));
  }
  if (isDict(a) && isDict(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && pyEq(a[k], b[k]));
  }
  return false;
}

/** `a < b` for numbers (bools included) and for strs (by code point); TypeError between other types. */
export function pyLt(a: unknown, b: unknown): boolean {
  const x = pyNumber(a);
  const y = pyNumber(b);
  if (x !== null && y !== null) return x < y;
  if (typeof a === 'string' && typeof b === 'string') return pyStrCompare(a, b) < 0;
  throw new PyException('TypeError', `'<' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`);
}

/** `float(v)` for a JSON value; `null` where Python raises (a list, a dict, None, a str that is not a float). */
export function pyFloat(v: unknown): number | null {
  if (typeof v === 'string') return pyFloatFromStr(v);
  return pyNumber(v);
}

/** `list(v)`: a list's items, a str's characters (code points), a dict's keys; TypeError for other types. */
export function pyIter(v: unknown): unknown[] {
  if (Array.isArray(v)) return [...v];
  if (typeof v === 'string') return Array.from(v);
  if (v instanceof Map) return [...v.keys()];
  if (v !== null && typeof v === 'object' && !(v instanceof PyFloat)) return Object.keys(v);
  throw new PyException('TypeError', `'${pyTypeName(v)}' object is not iterable`);
}

/** `operator.index(v)`: an int or a bool as a number (for indices and slice bounds); TypeError for other types. */
export function pyIntIndex(v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  throw new PyException('TypeError', `'${pyTypeName(v)}' object cannot be interpreted as an integer`);
}

/** `seq[i]` on a list: `i` an int or a bool, negative counts from the end; TypeError or IndexError as CPython. */
export function pyIndex<T>(seq: readonly T[], i: unknown): T {
  const n = typeof i === 'boolean' ? (i ? 1 : 0) : i;
  if (typeof n !== 'number' || !Number.isInteger(n)) {
    throw new PyException('TypeError', `list indices must be integers or slices, not ${pyTypeName(i)}`);
  }
  const j = n < 0 ? seq.length + n : n;
  if (j < 0 || j >= seq.length) throw new PyException('IndexError', 'list index out of range');
  return seq[j]!;
}

/** `v` as the receiver of a str method (`v.strip()`, `v.lower()`): a str, else AttributeError naming the method. */
export function pyStrReceiver(v: unknown, method: string): string {
  if (typeof v === 'string') return v;
  throw new PyException('AttributeError', `'${pyTypeName(v)}' object has no attribute '${method}'`);
}

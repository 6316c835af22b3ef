// Python value semantics that the checks depend on: kwargs coming from JSON are handled the way
// Python would treat the equivalent values (truthiness, `<` between numbers only, bool being an
// int). String methods and `re` come from the core's Python layer.
import { PyException, pyJsonLoads } from '@nemo-gym/core/py';

/** Thrown where Python would raise (TypeError, AttributeError, ValueError, ...). */
/** A Python exception whose message reads `Type: str(e)`, as this server reports errors. */
export class PyError extends PyException {
  constructor(pyType: string, message: string) {
    super(pyType, message, { prefixType: true });
  }
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

/** Requires a Python str (for `.strip()`, `.lower()` on kwargs); raises AttributeError otherwise. */
export function pyStr(v: unknown, what: string): string {
  if (typeof v === 'string') return v;
  throw new PyError('AttributeError', `'${pyTypeName(v)}' object (${what}) has no attribute 'strip'`);
}

/** Whether Python's `json.loads(text)` succeeds (nesting past CPython's recursion limit fails). */
export function pyJsonLoadable(text: string): boolean {
  try {
    pyJsonLoads(text, { maxNesting: 990 });
    return true;
  } catch {
    return false;
  }
}

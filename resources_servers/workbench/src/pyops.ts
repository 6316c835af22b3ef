/**
 * Python arithmetic, `min`/`max` and slicing for the pagination code of the search tools, where a
 * model may pass a page number or size of any JSON type.
 */
import { compare, numeric, PyException, PyFloat, typeName, type Value } from './py.js';

function isFloat(v: Value): boolean {
  return v instanceof PyFloat || (typeof v === 'number' && !Number.isInteger(v));
}

function operands(a: Value, b: Value, op: string): [number, number, boolean] {
  const x = numeric(a);
  const y = numeric(b);
  if (x === undefined || y === undefined) {
    throw new PyException('TypeError', `unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
  }
  return [x, y, isFloat(a) || isFloat(b)];
}

function result(v: number, float: boolean): Value {
  return float ? new PyFloat(v) : v;
}

export function add(a: Value, b: Value): Value {
  const [x, y, f] = operands(a, b, '+');
  return result(x + y, f);
}

export function sub(a: Value, b: Value): Value {
  const [x, y, f] = operands(a, b, '-');
  return result(x - y, f);
}

export function mul(a: Value, b: Value): Value {
  const [x, y, f] = operands(a, b, '*');
  return result(x * y, f);
}

export function floordiv(a: Value, b: Value): Value {
  const [x, y, f] = operands(a, b, '//');
  if (y === 0) throw new PyException('ZeroDivisionError', f ? 'float floor division by zero' : 'integer division or modulo by zero');
  return result(Math.floor(x / y), f);
}

/** Python `min(a, b)`: the first argument unless the second is smaller. */
export function min2(a: Value, b: Value): Value {
  return compare(b, a, '<') ? b : a;
}

/** Python `max(a, b)`: the first argument unless the second is larger. */
export function max2(a: Value, b: Value): Value {
  return compare(b, a, '>') ? b : a;
}

function sliceIndex(v: Value, len: number): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw new PyException('TypeError', 'slice indices must be integers or None or have an __index__ method');
  }
  if (v < 0) return Math.max(0, len + v);
  return Math.min(v, len);
}

/** Python `items[start:end]`. */
export function slice<T>(items: readonly T[], start: Value, end: Value): T[] {
  const s = sliceIndex(start, items.length);
  const e = sliceIndex(end, items.length);
  return items.slice(s, Math.max(s, e));
}

/**
 * The pagination every search tool shares:
 *   total_pages = (total + page_size - 1) // page_size
 *   page = max(1, min(page, total_pages)) if total_pages > 0 else 1
 *   items[(page - 1) * page_size : min(start + page_size, total)]
 */
export function paginate<T>(items: readonly T[], page: Value, pageSize: Value): { items: T[]; page: Value; totalPages: Value } {
  const total = items.length;
  const totalPages = floordiv(sub(add(total, pageSize), 1), pageSize);
  const p = compare(totalPages, 0, '>') ? max2(1, min2(page, totalPages)) : 1;
  const start = mul(sub(p, 1), pageSize);
  const end = min2(add(start, pageSize), total);
  return { items: slice(items, start, end), page: p, totalPages };
}

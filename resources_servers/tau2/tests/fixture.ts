import type { PyValue } from '@nemo-gym/core/py';

/** A JSON value with its objects as Maps, keys in written order (what db.json parsing gives). */
export function toTreeForTest(v: unknown): PyValue {
  if (Array.isArray(v)) return v.map(toTreeForTest);
  if (v !== null && typeof v === 'object') return new Map(Object.entries(v).map(([k, x]) => [k, toTreeForTest(x)]));
  return v as PyValue;
}

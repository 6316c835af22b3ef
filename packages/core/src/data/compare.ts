/**
 * Comparison of a metrics file already on disk with freshly computed metrics.
 *
 * Rules: every key of the old document must exist in the new one (new keys are fine), recursively;
 * lists must have the same length and the same elements in any order; two numbers match when
 * equal or within 5e-3 (magnitude >= 1) / 5e-4 (smaller); anything else must be equal.
 */
import { pyDumps } from '../py/dumps.js';
import type { PyValue } from '../py/json.js';

const isNum = (v: PyValue): v is number | bigint | boolean =>
  typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean';

function asFloat(v: number | bigint | boolean): number {
  return typeof v === 'boolean' ? (v ? 1 : 0) : Number(v);
}

function exactEqualNumbers(a: number | bigint | boolean, b: number | bigint | boolean): boolean {
  const ai = typeof a === 'boolean' ? (a ? 1n : 0n) : a;
  const bi = typeof b === 'boolean' ? (b ? 1n : 0n) : b;
  if (typeof ai === 'bigint' && typeof bi === 'bigint') return ai === bi;
  if (typeof ai === 'number' && typeof bi === 'number') return ai === bi;
  const f = typeof ai === 'number' ? ai : (bi as number);
  const i = typeof ai === 'bigint' ? ai : (bi as bigint);
  return Number.isInteger(f) && BigInt(f) === i;
}

/** Tolerant number comparison used for metrics files. */
export function numericClose(a: number | bigint | boolean, b: number | bigint | boolean): boolean {
  if (exactEqualNumbers(a, b)) return true;
  const af = asFloat(a);
  const bf = asFloat(b);
  const scale = Math.max(Math.abs(af), Math.abs(bf));
  const tol = scale >= 1 ? 5e-3 : 5e-4;
  return Math.abs(af - bf) <= Math.max(tol, 1e-9);
}

function hashKey(v: PyValue): string | undefined {
  if (v === null) return 'none';
  if (typeof v === 'string') return `s:${v}`;
  if (typeof v === 'boolean') return `n:${v ? 1 : 0}`;
  if (typeof v === 'bigint') return `n:${v}`;
  if (typeof v === 'number') return Number.isInteger(v) ? `n:${BigInt(v)}` : `f:${v}`;
  return undefined; // unhashable
}

function show(v: PyValue): string {
  return pyDumps(v);
}

function equalPlain(a: PyValue, b: PyValue): boolean {
  if (isNum(a) && isNum(b)) return exactEqualNumbers(a, b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  return show(a) === show(b);
}

export function diffValues(prev: PyValue, next: PyValue, path: string, diffs: string[]): void {
  if (prev instanceof Map && next instanceof Map) {
    for (const [k, pv] of prev) {
      const sub = path ? `${path}.${k}` : k;
      if (!next.has(k)) {
        diffs.push(`Missing key in new metrics: ${sub}`);
        continue;
      }
      diffValues(pv, next.get(k)!, sub, diffs);
    }
    return;
  }
  if (Array.isArray(prev) && Array.isArray(next)) {
    if (prev.length !== next.length) {
      diffs.push(`List length differs at ${path}: ${prev.length} != ${next.length}`);
      return;
    }
    const prevKeys = prev.map(hashKey);
    const nextKeys = next.map(hashKey);
    if (prevKeys.every((k) => k !== undefined) && nextKeys.every((k) => k !== undefined)) {
      const count = new Map<string, number>();
      for (const k of prevKeys) count.set(k!, (count.get(k!) ?? 0) + 1);
      for (const k of nextKeys) count.set(k!, (count.get(k!) ?? 0) - 1);
      if ([...count.values()].some((c) => c !== 0)) diffs.push(`Multiset mismatch at ${path}: ${show(prev)} != ${show(next)}`);
      return;
    }
    const used = new Set<number>();
    prev.forEach((pv, i) => {
      let found = false;
      for (let j = 0; j < next.length; j++) {
        if (used.has(j)) continue;
        const sub: string[] = [];
        diffValues(pv, next[j]!, `${path}[${i}]`, sub);
        if (sub.length === 0) {
          used.add(j);
          found = true;
          break;
        }
      }
      if (!found) diffs.push(`No matching element for ${path}[${i}] in new metrics (unordered)`);
    });
    return;
  }
  if (isNum(prev) && isNum(next)) {
    if (!numericClose(prev, next)) diffs.push(`Numeric mismatch at ${path}: ${show(prev)} != ${show(next)}`);
    return;
  }
  if (!equalPlain(prev, next)) diffs.push(`Value differs at ${path}: ${show(prev)} != ${show(next)}`);
}

/** Differences between an old metrics document and a new one (empty = compatible). */
export function diffMetrics(prev: PyValue, next: PyValue): string[] {
  const diffs: string[] = [];
  diffValues(prev, next, '', diffs);
  return diffs;
}

/**
 * Property test of the table type against a plain reference model (a list of labelled rows):
 * 10,000 seeded random operation sequences; after every step the table must match the model,
 * the previous table must be unchanged, and reward equality must agree with a direct
 * cell-by-cell reading of pandas' rules.
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 as rng } from '@nemo-gym/core/data';
import { eq, isMissing, type Value } from '../src/py.js';
import { Table, tablesEqualForReward } from '../src/table.js';

const COLUMNS = ['id', 'name', 'status'];
const NEW_COLUMN = 'extra';
type Row = { label: number; values: Record<string, Value> };
interface Model {
  columns: string[];
  rows: Row[];
}

type Op =
  | { kind: 'filter'; mask: boolean[] }
  | { kind: 'append'; rows: Record<string, Value>[]; ignoreIndex: boolean; withNewColumn: boolean }
  | { kind: 'appendWithLabel'; row: Value[] }
  | { kind: 'set'; mask: boolean[]; column: string; value: Value };

function randomValue(r: () => number): Value {
  const x = r();
  if (x < 0.1) return null;
  if (x < 0.15) return Math.floor(r() * 3);
  if (x < 0.18) return r() < 0.5;
  return ['a', 'A', 'b', 'B', 'Won', 'won', 'x y'][Math.floor(r() * 7)]!;
}

function randomOp(r: () => number, n: number, columns: string[]): Op {
  const x = r();
  const mask = () => Array.from({ length: n }, () => r() < 0.7);
  const row = (cols: string[]) => Object.fromEntries(cols.map((c) => [c, randomValue(r)]));
  if (x < 0.3) return { kind: 'filter', mask: mask() };
  if (x < 0.6) {
    const withNewColumn = r() < 0.1;
    const cols = withNewColumn ? [...COLUMNS, NEW_COLUMN] : COLUMNS;
    return { kind: 'append', rows: Array.from({ length: 1 + Math.floor(r() * 2) }, () => row(cols)), ignoreIndex: r() < 0.5, withNewColumn };
  }
  if (x < 0.7) return { kind: 'appendWithLabel', row: columns.map(() => randomValue(r)) };
  return { kind: 'set', mask: mask(), column: columns[Math.floor(r() * columns.length)]!, value: randomValue(r) };
}

function applyTable(t: Table, op: Op): Table {
  switch (op.kind) {
    case 'filter':
      return t.filter(op.mask);
    case 'append':
      return t.append(op.withNewColumn ? [...COLUMNS, NEW_COLUMN] : COLUMNS, op.rows, op.ignoreIndex);
    case 'appendWithLabel':
      return t.appendWithLabel(t.length, op.row);
    case 'set':
      return t.setWhere(op.mask, op.column, op.value);
  }
}

function applyModel(m: Model, op: Op): Model {
  switch (op.kind) {
    case 'filter':
      return { columns: m.columns, rows: m.rows.filter((_, i) => op.mask[i]) };
    case 'append': {
      const columns = [...m.columns];
      for (const c of op.withNewColumn ? [...COLUMNS, NEW_COLUMN] : COLUMNS) if (!columns.includes(c)) columns.push(c);
      const fill = (v: Record<string, Value>) => Object.fromEntries(columns.map((c) => [c, c in v ? v[c] : null]));
      const rows = [...m.rows.map((r) => ({ label: r.label, values: fill(r.values) })), ...op.rows.map((v, k) => ({ label: k, values: fill(v) }))];
      return { columns, rows: op.ignoreIndex ? rows.map((r, i) => ({ ...r, label: i })) : rows };
    }
    case 'appendWithLabel':
      return { columns: m.columns, rows: [...m.rows, { label: m.rows.length, values: Object.fromEntries(m.columns.map((c, i) => [c, op.row[i]])) }] };
    case 'set':
      return { columns: m.columns, rows: m.rows.map((r, i) => (op.mask[i] ? { label: r.label, values: { ...r.values, [op.column]: op.value } } : r)) };
  }
}

function snapshot(t: Table) {
  return JSON.stringify({ c: t.columns, i: t.index, r: t.records() });
}

/** pandas' rules read directly: lower-case strings (non-strings missing) except status; missing == missing. */
function referenceEqual(a: Model, b: Model): boolean {
  if (JSON.stringify(a.columns) !== JSON.stringify(b.columns) || a.rows.length !== b.rows.length) return false;
  return a.rows.every((ra, i) => {
    const rb = b.rows[i]!;
    if (ra.label !== rb.label) return false;
    return a.columns.every((c) => {
      let x = ra.values[c];
      let y = rb.values[c];
      if (c !== 'status') {
        x = typeof x === 'string' ? x.toLowerCase() : null;
        y = typeof y === 'string' ? y.toLowerCase() : null;
      }
      if (isMissing(x) || isMissing(y)) return isMissing(x) && isMissing(y);
      return eq(x, y);
    });
  });
}

function flipCase(op: Op, r: () => number): Op {
  const flip = (v: Value) => (typeof v === 'string' && r() < 0.3 ? (v === v.toLowerCase() ? v.toUpperCase() : v.toLowerCase()) : v);
  if (op.kind === 'append') return { ...op, rows: op.rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, flip(v)]))) };
  if (op.kind === 'set') return { ...op, value: flip(op.value) };
  if (op.kind === 'appendWithLabel') return { ...op, row: op.row.map(flip) };
  return op;
}

describe('Table (property, 10,000 seeded sequences)', () => {
  it('matches the reference model step by step, never mutates, and compares as pandas does', () => {
    const r = rng(20231130);
    let equalSeen = 0;
    let unequalSeen = 0;
    for (let seq = 0; seq < 10_000; seq++) {
      const start = Array.from({ length: 1 + Math.floor(r() * 4) }, () => Object.fromEntries(COLUMNS.map((c) => [c, randomValue(r)])));
      let a = Table.fromRecords(COLUMNS, start);
      let b = a;
      let ma: Model = { columns: [...COLUMNS], rows: start.map((values, label) => ({ label, values })) };
      let mb = ma;
      const steps = Math.floor(r() * 6);
      for (let s = 0; s < steps; s++) {
        const op = randomOp(r, a.length, [...a.columns]);
        const sameShape = a.length === b.length && a.columns.join() === b.columns.join();
        const before = snapshot(a);
        const next = applyTable(a, op);
        ma = applyModel(ma, op);
        // plain comparisons first (fast); expect() only to report a difference
        const got = snapshot(next);
        const want = JSON.stringify({ c: ma.columns, i: ma.rows.map((row) => row.label), r: ma.rows.map((row) => row.values) });
        if (got !== want) expect({ seq, step: s, op, table: JSON.parse(got) }).toEqual({ seq, step: s, op, table: JSON.parse(want) });
        if (snapshot(a) !== before) expect(snapshot(a)).toBe(before);
        if (next.data.some((col) => col.length !== next.length)) expect(next.data.map((col) => col.length)).toEqual(next.data.map(() => next.length));
        a = next;
        // the other table takes the same step (sometimes with other letter case), or sometimes another one
        const opB = !sameShape || r() < 0.1 ? randomOp(r, b.length, [...b.columns]) : r() < 0.3 ? flipCase(op, r) : op;
        b = applyTable(b, opB);
        mb = applyModel(mb, opB);
      }
      const expected = referenceEqual(ma, mb);
      const got = [tablesEqualForReward(a, b), tablesEqualForReward(b, a), tablesEqualForReward(a, a)];
      if (got[0] !== expected || got[1] !== expected || !got[2]) expect({ seq, got }).toEqual({ seq, got: [expected, expected, true] });
      if (expected) equalSeen++;
      else unequalSeen++;
    }
    // both outcomes are exercised
    expect(equalSeen).toBeGreaterThan(1000);
    expect(unequalSeen).toBeGreaterThan(1000);
  });
});

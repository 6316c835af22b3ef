/**
 * Reading rollout files: one JSON object per line, streamed (memory follows one row, not the
 * file). A line that is not a JSON object is reported by number, never dropped silently.
 */
import { readJsonl } from '@nemo-gym/core/data';

export type Json = Record<string, unknown>;

export interface RowOrProblem {
  lineNo: number;
  row?: Json;
  problem?: string;
}

/** Rows of a JSONL file in order; blank lines are skipped, unreadable ones come back as problems. */
export async function* readRows(path: string): AsyncGenerator<RowOrProblem> {
  for await (const line of readJsonl(path)) {
    yield line.row === null ? { lineNo: line.lineNo, problem: line.problem } : { lineNo: line.lineNo, row: line.row };
  }
}

export function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The reward of a rollout row, or undefined when it has none. */
export function rewardOf(row: Json): number | undefined {
  return typeof row.reward === 'number' && Number.isFinite(row.reward) ? row.reward : undefined;
}

/** Tags the collector puts on every result row. */
export const INDEX_KEYS = ['_ng_task_index', '_ng_rollout_index'] as const;

export function indexOf(row: Json, key: (typeof INDEX_KEYS)[number]): number | null {
  const v = row[key];
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}

/** Counts of what happened to rows, by reason, with the first few line numbers of each. */
export class Tally {
  readonly counts = new Map<string, number>();
  readonly examples = new Map<string, number[]>();

  add(reason: string, lineNo: number): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
    const ex = this.examples.get(reason) ?? [];
    if (ex.length < 5) ex.push(lineNo);
    this.examples.set(reason, ex);
  }

  get total(): number {
    let n = 0;
    for (const c of this.counts.values()) n += c;
    return n;
  }

  toJSON(): Record<string, { count: number; lines: number[] }> {
    const out: Record<string, { count: number; lines: number[] }> = {};
    for (const [k, c] of this.counts) out[k] = { count: c, lines: this.examples.get(k) ?? [] };
    return out;
  }

  lines(indent = '  '): string[] {
    return [...this.counts].map(([k, c]) => `${indent}${c} ${k} (first ${k.startsWith('tasks') ? 'task indices' : 'lines'}: ${(this.examples.get(k) ?? []).join(', ')})`);
  }
}

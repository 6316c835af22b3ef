/**
 * Rows grouped by task (pass@k per task), row and task filters, sorting, the collector's
 * failure records, and the per-task comparison of two rollout files.
 *
 * A task is identified by the collector's `_ng_task_index` tag; rows without it (files written by
 * other tools) are grouped by their prompt (`responses_create_params.input`).
 */
import { existsSync } from 'node:fs';
import { readJsonl } from '@nemo-gym/core/data';
import type { RowSummary } from './rollout-index.js';

/** A reward at or above this counts as passed (pass@k over binary rewards). */
export const PASS_REWARD = 1;

export type Outcome = 'passed' | 'partial' | 'failed' | 'invalid';
export const OUTCOMES: readonly Outcome[] = ['passed', 'partial', 'failed', 'invalid'];
export type TaskOutcome = 'never' | 'sometimes' | 'always';
export const TASK_OUTCOMES: readonly TaskOutcome[] = ['never', 'sometimes', 'always'];

export function rowOutcome(r: RowSummary): Outcome {
  if (r.error !== null || r.reward === null) return 'invalid';
  if (r.reward >= PASS_REWARD) return 'passed';
  return r.reward > 0 ? 'partial' : 'failed';
}

export function taskKey(r: RowSummary): string | null {
  if (r.taskIndex !== null) return `#${r.taskIndex}`;
  if (r.promptHash !== null) return `p:${r.promptHash}`;
  return null;
}

/** One failed rollout from the collector's `<stem>_failures.jsonl` that no later run completed. */
export interface CollectionFailure {
  taskIndex: number;
  rolloutIndex: number;
  agent: string | null;
  attempts: number;
  reason: string;
  status: number | null;
}

/**
 * Reads the failure records that still stand: the last record of each (task, rollout) whose
 * result is not in the rollouts file (a resumed run may have completed it since).
 */
export async function readCollectionFailures(path: string, rows: readonly RowSummary[]): Promise<CollectionFailure[]> {
  if (!existsSync(path)) return [];
  const done = new Set(rows.filter((r) => r.taskIndex !== null && r.rolloutIndex !== null).map((r) => `${r.taskIndex}/${r.rolloutIndex}`));
  const latest = new Map<string, CollectionFailure>();
  for await (const { row: rec } of readJsonl(path)) {
    if (rec === null || !Number.isInteger(rec._ng_task_index) || !Number.isInteger(rec._ng_rollout_index)) continue;
    const key = `${rec._ng_task_index as number}/${rec._ng_rollout_index as number}`;
    if (done.has(key)) continue;
    latest.set(key, {
      taskIndex: rec._ng_task_index as number,
      rolloutIndex: rec._ng_rollout_index as number,
      agent: typeof rec.agent === 'string' ? rec.agent : null,
      attempts: typeof rec.attempts === 'number' ? rec.attempts : 1,
      reason: typeof rec.reason === 'string' ? rec.reason : 'unknown reason',
      status: typeof rec.status === 'number' ? rec.status : null,
    });
  }
  return [...latest.values()].sort((a, b) => a.taskIndex - b.taskIndex || a.rolloutIndex - b.rolloutIndex);
}

export interface TaskGroup {
  key: string;
  taskIndex: number | null;
  promptHash: string | null;
  preview: string;
  /** Row indexes of the task's rollouts, in file order. */
  rows: number[];
  /** Rollouts with a numeric reward, masked samples left out (k). */
  k: number;
  passed: number;
  /** Mean reward over the k rollouts (mean@k). */
  mean: number | null;
  /** 1 when a rollout passed (binary rewards), else the best reward. */
  passAtK: number | null;
  /** pass@1: the share of passed rollouts (binary rewards), else the mean reward. */
  passAt1: number | null;
  /** Rollouts the collector recorded as failed (infrastructure), not in the file. */
  collectionFailures: number;
  agents: string[];
}

export function groupTasks(rows: readonly RowSummary[], failures: readonly CollectionFailure[] = []): TaskGroup[] {
  const groups = new Map<string, TaskGroup>();
  const rewards = new Map<string, number[]>();
  const get = (key: string, r: { taskIndex: number | null; promptHash: string | null; preview: string }): TaskGroup => {
    let g = groups.get(key);
    if (!g) {
      g = { key, taskIndex: r.taskIndex, promptHash: r.promptHash, preview: r.preview, rows: [], k: 0, passed: 0, mean: null, passAtK: null, passAt1: null, collectionFailures: 0, agents: [] };
      groups.set(key, g);
      rewards.set(key, []);
    }
    return g;
  };
  for (const r of rows) {
    const key = taskKey(r);
    if (key === null) continue;
    const g = get(key, r);
    g.rows.push(r.index);
    if (r.agent !== null && !g.agents.includes(r.agent)) g.agents.push(r.agent);
    // Masked samples stay listed with their task but count in no reward figure (as in the collector's metrics).
    if (r.error === null && r.reward !== null && !r.masked) rewards.get(key)!.push(r.reward);
  }
  for (const f of failures) {
    const g = get(`#${f.taskIndex}`, { taskIndex: f.taskIndex, promptHash: null, preview: '' });
    g.collectionFailures++;
    if (f.agent !== null && !g.agents.includes(f.agent)) g.agents.push(f.agent);
  }
  for (const g of groups.values()) {
    const rs = rewards.get(g.key)!;
    g.k = rs.length;
    if (rs.length === 0) continue;
    g.passed = rs.filter((x) => x >= PASS_REWARD).length;
    g.mean = rs.reduce((a, b) => a + b, 0) / rs.length;
    const binary = rs.every((x) => x === 0 || x === 1);
    g.passAtK = binary ? (g.passed > 0 ? 1 : 0) : Math.max(...rs);
    g.passAt1 = binary ? g.passed / rs.length : g.mean;
  }
  // Tagged tasks in task order, the others in the order of their first row.
  const order = (g: TaskGroup) => [g.taskIndex ?? Infinity, g.rows[0] ?? Infinity] as const;
  return [...groups.values()].sort((x, y) => order(x)[0] - order(y)[0] || order(x)[1] - order(y)[1]);
}

export function taskOutcome(g: TaskGroup): TaskOutcome | null {
  if (g.k === 0) return null;
  if (g.passed === 0) return 'never';
  return g.passed === g.k ? 'always' : 'sometimes';
}

/** Task figures of a run: how many tasks, rollouts per task when every task has the same number (else null), mean pass@k and pass@1. */
export function taskFigures(groups: readonly TaskGroup[]): { count: number; k: number | null; passAtK: number | null; passAt1: number | null } {
  const ks = new Set(groups.filter((g) => g.k > 0).map((g) => g.k));
  return { count: groups.length, k: ks.size === 1 ? [...ks][0]! : null, passAtK: meanOver(groups, (g) => g.passAtK), passAt1: meanOver(groups, (g) => g.passAt1) };
}

/** Mean over tasks of a per-task value (tasks without rewards left out). */
export function meanOver(groups: readonly TaskGroup[], pick: (g: TaskGroup) => number | null): number | null {
  const xs = groups.map(pick).filter((x): x is number => x !== null);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}

export interface TaskSide {
  k: number;
  passed: number;
  mean: number | null;
  passAtK: number | null;
  rows: number[];
}

export interface TaskComparison {
  key: string;
  taskIndex: number | null;
  preview: string;
  a: TaskSide | null;
  b: TaskSide | null;
  /** Mean reward of B minus mean reward of A (null when the task is missing or unscored on a side). */
  delta: number | null;
}

export interface ComparisonSummary {
  /** How tasks were matched: the collector's task index (both files tagged) or the prompt. */
  matchedBy: 'task index' | 'prompt';
  tasksA: number;
  tasksB: number;
  matched: number;
  onlyA: number;
  onlyB: number;
  meanA: number | null;
  meanB: number | null;
  /** Mean of the per-task deltas over matched tasks. */
  meanDelta: number | null;
  improved: number;
  regressed: number;
  unchanged: number;
}

const side = (g: TaskGroup): TaskSide => ({ k: g.k, passed: g.passed, mean: g.mean, passAtK: g.passAtK, rows: g.rows });

/** Matches the tasks of two files and computes per-task reward deltas (B − A). */
export function compareTasks(a: readonly TaskGroup[], b: readonly TaskGroup[]): { summary: ComparisonSummary; tasks: TaskComparison[] } {
  const tagged = (gs: readonly TaskGroup[]) => gs.length > 0 && gs.every((g) => g.taskIndex !== null);
  const byIndex = tagged(a) && tagged(b);
  const matchKey = (g: TaskGroup): string | null => (byIndex ? `#${g.taskIndex}` : g.promptHash === null ? null : `p:${g.promptHash}`);
  const out = new Map<string, TaskComparison>();
  for (const g of a) {
    const key = matchKey(g);
    if (key !== null && !out.has(key)) out.set(key, { key, taskIndex: g.taskIndex, preview: g.preview, a: side(g), b: null, delta: null });
  }
  for (const g of b) {
    const key = matchKey(g);
    if (key === null) continue;
    const t = out.get(key);
    if (t) {
      if (t.b === null) t.b = side(g);
      if (!t.preview) t.preview = g.preview;
    } else out.set(key, { key, taskIndex: g.taskIndex, preview: g.preview, a: null, b: side(g), delta: null });
  }
  const tasks = [...out.values()];
  let improved = 0;
  let regressed = 0;
  let unchanged = 0;
  const deltas: number[] = [];
  for (const t of tasks) {
    if (t.a?.mean == null || t.b?.mean == null) continue;
    t.delta = t.b.mean - t.a.mean;
    deltas.push(t.delta);
    if (Math.abs(t.delta) < 1e-12) unchanged++;
    else if (t.delta > 0) improved++;
    else regressed++;
  }
  const mean = (xs: number[]) => (xs.length ? xs.reduce((x, y) => x + y, 0) / xs.length : null);
  const matched = tasks.filter((t) => t.a && t.b).length;
  return {
    summary: {
      matchedBy: byIndex ? 'task index' : 'prompt',
      tasksA: a.length,
      tasksB: b.length,
      matched,
      onlyA: tasks.filter((t) => t.a && !t.b).length,
      onlyB: tasks.filter((t) => !t.a && t.b).length,
      meanA: meanOver(a, (g) => g.mean),
      meanB: meanOver(b, (g) => g.mean),
      meanDelta: mean(deltas),
      improved,
      regressed,
      unchanged,
    },
    tasks,
  };
}

/**
 * Sorts a copy of `items` by the value `key` picks, ascending or descending; missing values
 * (null) go last either way, and ties keep their order.
 */
export function sortBy<T>(items: readonly T[], pick: (item: T) => number | string | null, order: 'asc' | 'desc'): T[] {
  const dir = order === 'asc' ? 1 : -1;
  const keyed = items.map((item, i) => ({ item, i, v: pick(item) }));
  keyed.sort((x, y) => {
    if (x.v === null || y.v === null) return x.v === y.v ? x.i - y.i : x.v === null ? 1 : -1;
    const c = typeof x.v === 'number' && typeof y.v === 'number' ? x.v - y.v : String(x.v).localeCompare(String(y.v));
    return c !== 0 ? c * dir : x.i - y.i;
  });
  return keyed.map((k) => k.item);
}

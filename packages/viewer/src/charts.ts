/**
 * What the charts show, aggregated on the server from the row summaries (so a file of 200,000
 * rows sends the page a few hundred numbers, never its rows): reward, per-task pass rate, token,
 * length and latency distributions, tool calls and errors per tool, reward components, and a
 * breakdown of any verifier field, reward component or the agent. Masked samples are counted apart
 * and left out of every reward figure, as the collector's metrics leave them out.
 */
import { existsSync, readFileSync } from 'node:fs';
import { MetricsAccumulator, quantile, sidecarPath } from '@nemo-gym/core/rollouts';
import { formatNumber, histogramOf, type HistogramBin, type RowSummary } from './rollout-index.js';
import { PASS_REWARD, taskFigures, type TaskGroup } from './tasks.js';

export interface Distribution {
  /** Rows that have the value. */
  count: number;
  mean: number | null;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
  bins: HistogramBin[];
}

export interface PassRates {
  /** Tasks with at least one rewarded rollout. */
  tasks: number;
  /**
   * Tasks whose rollouts' rewards differ (the training signal: for 0/1 rewards, some but not all
   * passed) / the others: every rollout passed, or none did (all with the same reward).
   */
  never: number;
  signal: number;
  always: number;
  /** Tasks per pass rate: 0, then quarters, then 1. */
  bins: HistogramBin[];
}

export interface ToolLine {
  name: string;
  calls: number;
  errors: number;
}

/** Masked samples of a set of rows: how many, and how many per failure reason (largest first). */
export interface MaskedCount {
  count: number;
  byReason: { reason: string; count: number }[];
}

export interface ComponentChart {
  name: string;
  /** The component's values over the unmasked rows that have it. */
  values: Distribution;
}

/**
 * The collector's metrics computed over the same rows by core's own accumulator (masked samples
 * counted apart): `mean`, `mean_where_present`, pass@k, `reward_components`, `masked`.
 */
export type RunMetrics = Record<string, unknown>;

export interface ChartData {
  /** Rows the charts were computed from (the rows matching the list's filters), and the file's row count. */
  rows: number;
  totalRows: number;
  /** Masked samples among them: left out of the reward, pass-rate, component and breakdown figures. */
  masked: MaskedCount;
  /** Tasks of these rows; rollouts per task when every task has the same number; mean pass@k and pass@1 over tasks. */
  tasks: { count: number; k: number | null; passAtK: number | null; passAt1: number | null };
  reward: Distribution;
  components: ComponentChart[];
  metrics: RunMetrics;
  passRate: PassRates;
  outputTokens: Distribution;
  inputTokens: Distribution;
  outputChars: Distribution;
  toolCallsPerRollout: Distribution;
  latency: Distribution;
  /** The collector's latency summary from `<stem>_metrics.json` (p50/p90/p99/max seconds), when that file is there. */
  collectorLatency: Record<string, number> | null;
  tools: ToolLine[];
  /** Rollouts with at least one function call / with at least one tool error. */
  rowsWithCalls: number;
  rowsWithToolErrors: number;
  /** What the breakdown can group by: `agent`, then every verifier field seen. */
  groupable: string[];
}

export function distribution(values: number[]): Distribution {
  if (values.length === 0) return { count: 0, mean: null, p50: null, p90: null, p99: null, max: null, bins: [] };
  const sorted = [...values].sort((a, b) => a - b);
  let sum = 0;
  for (const v of sorted) sum += v;
  const q = (p: number) => quantile(sorted, p);
  return { count: sorted.length, mean: sum / sorted.length, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: sorted[sorted.length - 1]!, bins: histogramOf(values) };
}

const PASS_BINS: readonly [string, number, number][] = [
  ['0', 0, 0],
  ['0–0.25', 0, 0.25],
  ['0.25–0.5', 0.25, 0.5],
  ['0.5–0.75', 0.5, 0.75],
  ['0.75–1', 0.75, 1],
  ['1', 1, 1],
];

/** Per-task pass rate (pass@1: the share of passed rollouts, or the mean of non-binary rewards) in six bins. */
export function passRates(tasks: readonly TaskGroup[]): PassRates {
  const bins: HistogramBin[] = PASS_BINS.map(([label, lo, hi]) => ({ label, lo, hi, count: 0 }));
  const out: PassRates = { tasks: 0, never: 0, signal: 0, always: 0, bins };
  for (const g of tasks) {
    if (g.k === 0 || g.passAt1 === null) continue;
    out.tasks++;
    // The best reward (pass@k) above the mean means the rewards differ.
    if (g.mean !== null && g.passAtK !== null && g.passAtK - g.mean > 1e-12) out.signal++;
    else if (g.passed === g.k) out.always++;
    else out.never++;
    const p = g.passAt1;
    const b = p <= 0 ? 0 : p >= PASS_REWARD ? 5 : Math.min(4, 1 + Math.floor(p * 4 - 1e-12));
    bins[b]!.count++;
  }
  return out;
}

/** The latency summary the collector wrote beside the file, if any. */
export function collectorLatency(jsonlPath: string): Record<string, number> | null {
  const path = sidecarPath(jsonlPath, 'metrics.json');
  if (!existsSync(path)) return null;
  try {
    const doc = JSON.parse(readFileSync(path, 'utf8')) as { latency_s?: { rollout?: Record<string, number> } };
    return doc.latency_s?.rollout ?? null;
  } catch {
    return null;
  }
}

/** Masked samples of `rows` by failure reason. */
export function maskedCount(rows: readonly RowSummary[]): MaskedCount {
  const by = new Map<string, number>();
  let count = 0;
  for (const r of rows) {
    if (!r.masked) continue;
    count++;
    const reason = r.failureReason ?? 'unspecified';
    by.set(reason, (by.get(reason) ?? 0) + 1);
  }
  return { count, byReason: [...by].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0])).map(([reason, n]) => ({ reason, count: n })) };
}

/** The collector's metrics over these rows, by core's MetricsAccumulator fed what each row's summary kept. */
export function runMetrics(rows: readonly RowSummary[]): RunMetrics {
  const acc = new MetricsAccumulator();
  for (const r of rows) {
    if (r.error !== null) continue;
    const result: Record<string, unknown> = { ...r.scores, reward: r.reward };
    if (r.components.length) result.reward_components = Object.fromEntries(r.components);
    if (r.masked) {
      result.mask_sample = true;
      result.failure_reason = r.failureReason;
    }
    acc.add(result, r.taskIndex ?? undefined);
  }
  // The per-task list is one entry per task (25,000 on a large run): the pass-rate chart shows it binned.
  const { per_task: _perTask, ...summary } = acc.summary();
  return summary;
}

/** Group-by name of a reward component. */
export const componentField = (name: string): string => `reward_components.${name}`;

export function chartData(rows: readonly RowSummary[], tasks: readonly TaskGroup[], jsonlPath: string, totalRows = rows.length): ChartData {
  const reward: number[] = [];
  const components = new Map<string, number[]>();
  const outTok: number[] = [];
  const inTok: number[] = [];
  const chars: number[] = [];
  const calls: number[] = [];
  const latency: number[] = [];
  const tools = new Map<string, ToolLine>();
  const fields = new Set<string>();
  let rowsWithCalls = 0;
  let rowsWithToolErrors = 0;
  for (const r of rows) {
    if (r.error !== null) continue;
    if (r.reward !== null && !r.masked) reward.push(r.reward);
    if (!r.masked) {
      for (const [name, v] of r.components) {
        const list = components.get(name);
        if (list) list.push(v);
        else components.set(name, [v]);
      }
    }
    if (r.outputTokens !== null) outTok.push(r.outputTokens);
    if (r.inputTokens !== null) inTok.push(r.inputTokens);
    chars.push(r.outputChars);
    calls.push(r.toolCalls);
    if (r.latencyS !== null) latency.push(r.latencyS);
    if (r.toolCalls > 0) rowsWithCalls++;
    if (r.toolErrors > 0) rowsWithToolErrors++;
    for (const [name, c, e] of r.tools) {
      const t = tools.get(name) ?? { name, calls: 0, errors: 0 };
      t.calls += c;
      t.errors += e;
      tools.set(name, t);
    }
    for (const k in r.scores) fields.add(k);
    for (const k in r.labels) fields.add(k);
  }
  const names = [...components.keys()].sort();
  return {
    tasks: taskFigures(tasks),
    rows: rows.length,
    totalRows,
    masked: maskedCount(rows),
    reward: distribution(reward),
    components: names.map((name) => ({ name, values: distribution(components.get(name)!) })),
    metrics: runMetrics(rows),
    passRate: passRates(tasks),
    outputTokens: distribution(outTok),
    inputTokens: distribution(inTok),
    outputChars: distribution(chars),
    toolCallsPerRollout: distribution(calls),
    latency: distribution(latency),
    collectorLatency: collectorLatency(jsonlPath),
    tools: [...tools.values()].sort((a, b) => b.errors - a.errors || b.calls - a.calls || a.name.localeCompare(b.name)),
    rowsWithCalls,
    rowsWithToolErrors,
    groupable: ['agent', ...[...fields].sort(), ...names.map(componentField)],
  };
}

export interface BreakdownGroup {
  value: string;
  rows: number;
  /** Masked samples in the group (counted in `rows`, left out of every reward figure). */
  masked: number;
  /** Unmasked rows with a numeric reward; their mean, and the share of them that passed (reward ≥ 1). */
  rewarded: number;
  meanReward: number | null;
  passRate: number | null;
  meanOutputTokens: number | null;
  toolCalls: number;
  toolErrors: number;
  p50LatencyS: number | null;
}

export interface Breakdown {
  by: string;
  /** Distinct values; only the `MAX_GROUPS` largest are listed, the rest summed into one line. */
  values: number;
  groups: BreakdownGroup[];
}

export const MAX_GROUPS = 40;

/** The value a row has for `by`: its agent, a verifier field (text, number or boolean), a reward component, or `(none)`. */
function groupValue(r: RowSummary, by: string): string {
  if (by === 'agent') return r.agent ?? '(none)';
  if (by.startsWith('reward_components.')) {
    const c = r.components.find(([name]) => componentField(name) === by);
    if (c) return formatNumber(c[1]);
  }
  if (Object.hasOwn(r.labels, by)) return r.labels[by]!;
  if (Object.hasOwn(r.scores, by)) return String(r.scores[by]);
  return '(none)';
}

interface Acc {
  value: string;
  rows: number;
  masked: number;
  rewards: number[];
  passed: number;
  tokens: number[];
  calls: number;
  errors: number;
  latency: number[];
}

function finish(a: Acc): BreakdownGroup {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((x, y) => x + y, 0) / xs.length : null);
  const lat = a.latency.sort((x, y) => x - y);
  return {
    value: a.value,
    rows: a.rows,
    masked: a.masked,
    rewarded: a.rewards.length,
    meanReward: mean(a.rewards),
    passRate: a.rewards.length ? a.passed / a.rewards.length : null,
    meanOutputTokens: mean(a.tokens),
    toolCalls: a.calls,
    toolErrors: a.errors,
    p50LatencyS: lat.length ? quantile(lat, 0.5) : null,
  };
}

/** Rows grouped by the agent, a verifier field or a reward component: per value the row count, masked samples, mean reward, pass rate, tokens, tool errors, latency. */
export function breakdown(rows: readonly RowSummary[], by: string): Breakdown {
  const accs = new Map<string, Acc>();
  for (const r of rows) {
    if (r.error !== null) continue;
    const value = groupValue(r, by);
    let a = accs.get(value);
    if (!a) {
      a = { value, rows: 0, masked: 0, rewards: [], passed: 0, tokens: [], calls: 0, errors: 0, latency: [] };
      accs.set(value, a);
    }
    a.rows++;
    if (r.masked) a.masked++;
    else if (r.reward !== null) {
      a.rewards.push(r.reward);
      if (r.reward >= PASS_REWARD) a.passed++;
    }
    if (r.outputTokens !== null) a.tokens.push(r.outputTokens);
    a.calls += r.toolCalls;
    a.errors += r.toolErrors;
    if (r.latencyS !== null) a.latency.push(r.latencyS);
  }
  const all = [...accs.values()].sort((x, y) => y.rows - x.rows || x.value.localeCompare(y.value));
  const shown = all.slice(0, MAX_GROUPS);
  const rest = all.slice(MAX_GROUPS);
  if (rest.length) {
    const other: Acc = { value: `(${rest.length} other values)`, rows: 0, masked: 0, rewards: [], passed: 0, tokens: [], calls: 0, errors: 0, latency: [] };
    for (const a of rest) {
      other.rows += a.rows;
      other.masked += a.masked;
      other.rewards = other.rewards.concat(a.rewards);
      other.passed += a.passed;
      other.tokens = other.tokens.concat(a.tokens);
      other.calls += a.calls;
      other.errors += a.errors;
      other.latency = other.latency.concat(a.latency);
    }
    shown.push(other);
  }
  return { by, values: all.length, groups: shown.map(finish) };
}

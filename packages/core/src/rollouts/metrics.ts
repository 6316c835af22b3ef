/**
 * Aggregate metrics over rollout results: upstream's mean of every top-level numeric (and
 * boolean) field, and pass@k / mean@k when tasks were rolled out more than once (each task with its
 * own number of scored rollouts, see {@link passAtKOf}); beyond
 * means: per-task pass rate and reward spread, token usage (from each response's `usage`) and the
 * latency of each rollout as the collector saw it.
 *
 * A masked sample (`mask_sample: true`, with its `failure_reason`: the agent or verifier cannot vouch
 * for it) stays in the output but is counted apart (`masked`), never in a mean or pass@k. Named
 * reward components (`reward_components: {name: number}`) get their own mean and pass@k.
 */

/** True when a result row is a masked sample (upstream's `mask_sample: true`). */
export function isMasked(result: Record<string, unknown>): boolean {
  return result.mask_sample === true;
}

/** A row's named reward components (finite numbers only), or null when it has none. */
export function rewardComponentsOf(result: Record<string, unknown>): Map<string, number> | null {
  const c = result.reward_components;
  if (c === null || typeof c !== 'object' || Array.isArray(c)) return null;
  const out = new Map<string, number>();
  for (const [k, v] of Object.entries(c)) if (typeof v === 'number' && Number.isFinite(v)) out.set(k, v);
  return out.size ? out : null;
}

/** How a masked row's reason is counted (a short, stable key). */
function maskReason(result: Record<string, unknown>): string {
  const r = result.failure_reason;
  if (typeof r !== 'string' || !r) return 'unspecified';
  return r.length > 80 ? `${r.slice(0, 80)}…` : r;
}

/** Token counts of one result, from its response's usage (Responses or Chat Completions names). */
export function usageOf(result: Record<string, unknown>): { input: number; output: number } | null {
  const response = result.response as { usage?: unknown } | undefined;
  const usage = response && typeof response === 'object' ? response.usage : undefined;
  if (!usage || typeof usage !== 'object') return null;
  const u = usage as Record<string, unknown>;
  const pick = (...keys: string[]) => {
    for (const k of keys) if (typeof u[k] === 'number' && Number.isFinite(u[k])) return u[k] as number;
    return undefined;
  };
  const input = pick('input_tokens', 'prompt_tokens');
  const output = pick('output_tokens', 'completion_tokens');
  if (input === undefined && output === undefined) return null;
  return { input: input ?? 0, output: output ?? 0 };
}

/** The q-quantile (0..1) of sorted values, by linear interpolation. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

const round = (x: number, digits = 4) => Number(x.toFixed(digits));

/** p50/p90/p99/max of durations in ms, reported in seconds. */
export function latencySummary(ms: readonly number[]): Record<string, number> | null {
  if (ms.length === 0) return null;
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: round(quantile(sorted, 0.5) / 1000, 3),
    p90: round(quantile(sorted, 0.9) / 1000, 3),
    p99: round(quantile(sorted, 0.99) / 1000, 3),
    max: round(sorted[sorted.length - 1]! / 1000, 3),
  };
}

/** A reward counts as a pass when it is full credit (≥ 1; binary rewards: exactly 1). */
export const isPass = (reward: number) => reward >= 1;

/**
 * What {@link MetricsAccumulator.add} reads of a result, and nothing else: its top-level numbers
 * and booleans and its response's usage. Adding the digest counts exactly as adding the result,
 * so a worker can send it instead of the collector parsing every result again.
 */
export function metricsDigest(result: Record<string, unknown>): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(result)) {
    if (k.startsWith('_ng_')) continue;
    if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') out[k] = v;
  }
  const response = result.response as { usage?: unknown } | null | undefined;
  if (response && typeof response === 'object' && response.usage && typeof response.usage === 'object') out.response = { usage: response.usage };
  const components = rewardComponentsOf(result);
  if (components) out.reward_components = Object.fromEntries(components);
  if (isMasked(result) && typeof result.failure_reason === 'string') out.failure_reason = result.failure_reason;
  return out;
}

/**
 * Values per task, each with its rollout index: read back in rollout order (values added without
 * an index after the others, in the order added), so "the first k" of a task does not depend on
 * which rollouts finished first.
 */
class TaskValues {
  private readonly byTask = new Map<number, { r: number; v: number }[]>();
  get size(): number {
    return this.byTask.size;
  }
  push(task: number, rolloutIndex: number | undefined, v: number): void {
    const list = this.byTask.get(task) ?? [];
    list.push({ r: rolloutIndex ?? Infinity, v });
    this.byTask.set(task, list);
  }
  /** Each task's values in rollout order. */
  inOrder(): Map<number, number[]> {
    return new Map([...this.byTask].map(([t, list]) => [t, [...list].sort((a, b) => a.r - b.r).map((x) => x.v)]));
  }
}

export class MetricsAccumulator {
  private readonly sums = new Map<string, number>();
  private readonly counts = new Map<string, number>();
  private readonly perTask = new TaskValues();
  private readonly perAgent = new Map<string, MetricsAccumulator>();
  /** Durations (ms) of the rollouts this run completed, as the collector timed them. */
  private readonly latencies: number[] = [];
  /** Per component name: its sum, and per task its values (for pass@k). */
  private readonly components = new Map<string, { sum: number; n: number; perTask: TaskValues }>();
  /** Masked samples by failure reason. */
  private readonly maskedBy = new Map<string, number>();
  masked = 0;
  rows = 0;
  inputTokens = 0;
  outputTokens = 0;
  rowsWithUsage = 0;

  /** `trackTasks`: keep per-task rewards for pass@k (only useful with several rollouts per task). */
  constructor(private readonly trackTasks = true) {}

  /** Counts one result of task `taskIndex` (its rollout `rolloutIndex`: the order pass@k reads a task's values in). */
  add(result: Record<string, unknown>, taskIndex?: number, agent?: string, rolloutIndex?: number): void {
    this.addRow(result, taskIndex, agent, rolloutIndex, true);
  }

  private addRow(result: Record<string, unknown>, taskIndex: number | undefined, agent: string | undefined, rolloutIndex: number | undefined, nested: boolean): void {
    if (isMasked(result)) {
      this.addMasked(result, agent, nested);
      return;
    }
    this.rows++;
    for (const [k, v] of Object.entries(result)) {
      if (k.startsWith('_ng_')) continue;
      let x: number | undefined;
      if (typeof v === 'number' && Number.isFinite(v)) x = v;
      else if (typeof v === 'boolean') x = v ? 1 : 0;
      if (x === undefined) continue;
      this.sums.set(k, (this.sums.get(k) ?? 0) + x);
      this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
    }
    if (nested) {
      const usage = usageOf(result);
      if (usage) {
        this.rowsWithUsage++;
        this.inputTokens += usage.input;
        this.outputTokens += usage.output;
      }
    }
    const reward = typeof result.reward === 'number' ? result.reward : typeof result.reward === 'boolean' ? Number(result.reward) : 0;
    if (taskIndex !== undefined && this.trackTasks) this.perTask.push(taskIndex, rolloutIndex, reward);
    for (const [name, x] of rewardComponentsOf(result) ?? []) {
      let c = this.components.get(name);
      if (!c) this.components.set(name, (c = { sum: 0, n: 0, perTask: new TaskValues() }));
      c.sum += x;
      c.n++;
      if (taskIndex !== undefined && this.trackTasks) c.perTask.push(taskIndex, rolloutIndex, x);
    }
    if (nested && agent) {
      let acc = this.perAgent.get(agent);
      if (!acc) this.perAgent.set(agent, (acc = new MetricsAccumulator(this.trackTasks)));
      acc.addRow(result, taskIndex, undefined, rolloutIndex, false);
    }
  }

  /** A masked sample: counted by reason (and its tokens, which were spent), nothing else. */
  private addMasked(result: Record<string, unknown>, agent: string | undefined, nested: boolean): void {
    this.masked++;
    const reason = maskReason(result);
    this.maskedBy.set(reason, (this.maskedBy.get(reason) ?? 0) + 1);
    if (!nested) return;
    const usage = usageOf(result);
    if (usage) {
      this.rowsWithUsage++;
      this.inputTokens += usage.input;
      this.outputTokens += usage.output;
    }
    if (agent) {
      let acc = this.perAgent.get(agent);
      if (!acc) this.perAgent.set(agent, (acc = new MetricsAccumulator(this.trackTasks)));
      acc.addRow(result, undefined, undefined, undefined, false);
    }
  }

  /** Masked samples: how many, and how many for each failure reason (largest first). */
  maskedSummary(): { count: number; by_reason: Record<string, number> } | null {
    if (this.masked === 0) return null;
    return { count: this.masked, by_reason: Object.fromEntries([...this.maskedBy].sort((a, b) => b[1] - a[1])) };
  }

  /** Per reward component: its mean over the rows that have it, and pass@k / mean@k like the reward's. */
  componentStats(): Record<string, Record<string, number>> | null {
    if (this.components.size === 0) return null;
    const out: Record<string, Record<string, number>> = {};
    for (const name of [...this.components.keys()].sort()) {
      const c = this.components.get(name)!;
      out[name] = { rows: c.n, mean: c.sum / c.n, ...(passAtKOf(c.perTask.inOrder()) ?? {}) };
    }
    return out;
  }

  /** Records how long one rollout of this run took (ms). */
  addLatency(ms: number): void {
    this.latencies.push(ms);
  }

  /** Token usage totals and per-rollout means over the rows that reported usage. */
  tokens(): Record<string, number> | null {
    if (this.rowsWithUsage === 0) return null;
    return {
      rollouts_with_usage: this.rowsWithUsage,
      input_total: this.inputTokens,
      output_total: this.outputTokens,
      input_mean: round(this.inputTokens / this.rowsWithUsage, 2),
      output_mean: round(this.outputTokens / this.rowsWithUsage, 2),
    };
  }

  /**
   * Per task (k > 1 rollouts each): its pass rate (share of full-credit rewards) and reward spread,
   * and over all tasks how many always, never or sometimes passed.
   */
  taskStats(): { summary: Record<string, number>; perTask: Record<string, number>[] } | null {
    if (this.perTask.size === 0) return null;
    const perTask: Record<string, number>[] = [];
    let allPass = 0;
    let nonePass = 0;
    let passSum = 0;
    let stdSum = 0;
    for (const [task, rs] of [...this.perTask.inOrder()].sort((a, b) => a[0] - b[0])) {
      const n = rs.length;
      const mean = rs.reduce((a, b) => a + b, 0) / n;
      const std = Math.sqrt(rs.reduce((a, r) => a + (r - mean) ** 2, 0) / n);
      const passes = rs.filter(isPass).length;
      if (passes === n) allPass++;
      if (passes === 0) nonePass++;
      passSum += passes / n;
      stdSum += std;
      perTask.push({ task, n, pass_rate: round(passes / n), mean: round(mean), std: round(std), min: Math.min(...rs), max: Math.max(...rs) });
    }
    const count = this.perTask.size;
    return {
      summary: { count, all_pass: allPass, none_pass: nonePass, some_pass: count - allPass - nonePass, pass_rate_mean: round(passSum / count), reward_std_mean: round(stdSum / count) },
      perTask,
    };
  }

  /** Mean of each numeric key over all rows (upstream divides by the row count; reward defaults to 0). */
  means(): Record<string, number> {
    const out: Record<string, number> = {};
    if (this.rows === 0) return out;
    for (const [k, s] of this.sums) out[k] = s / this.rows;
    if (!('reward' in out)) out.reward = 0;
    return out;
  }

  /**
   * The fields some rows lack (a verifier field only one environment of a mixed run sets, a metric
   * only some outcomes carry): their mean over the rows that have them, and how many those are.
   * `means()` divides by every row, as upstream does, which reads 0.333 for a field that is 1 on
   * the third of the rows that have it.
   */
  presentMeans(): Record<string, { mean: number; rows: number }> {
    const out: Record<string, { mean: number; rows: number }> = {};
    for (const [k, n] of this.counts) if (n < this.rows) out[k] = { mean: this.sums.get(k)! / n, rows: n };
    return out;
  }

  /** pass@k and mean@k over tasks (k = the number of rollouts each task has). */
  passAtK(): Record<string, number> | null {
    return passAtKOf(this.perTask.inOrder());
  }

  summary(): Record<string, unknown> {
    const out: Record<string, unknown> = { rows: this.rows, mean: this.means(), ...withPresentMeans(this) };
    const pk = this.passAtK();
    if (pk) Object.assign(out, pk);
    const components = this.componentStats();
    if (components) out.reward_components = components;
    const masked = this.maskedSummary();
    if (masked) out.masked = masked;
    const tokens = this.tokens();
    if (tokens) out.tokens = tokens;
    const latency = latencySummary(this.latencies);
    if (latency) out.latency_s = { rollout: latency };
    const tasks = this.taskStats();
    if (tasks) {
      out.tasks = tasks.summary;
      out.per_task = tasks.perTask;
    }
    if (this.perAgent.size > 1) {
      out.per_agent = Object.fromEntries(
        [...this.perAgent].map(([a, acc]) => [a, { rows: acc.rows, mean: acc.means(), ...withPresentMeans(acc), ...(acc.passAtK() ?? {}), ...(acc.masked ? { masked: acc.masked } : {}) }]),
      );
    }
    return out;
  }
}

/**
 * pass@k and mean@k over tasks' values, where each task may have its own number n of scored values
 * (masked samples and failed rollouts are left out, so tasks routinely differ):
 * - k is the largest n of any task (the run's `num_repeats` unless every task lost a rollout);
 *   nothing is reported when k is 1.
 * - Per task, {@link taskPassAtK} with that task's own n; pass@k is the mean over the tasks with
 *   n ≥ k, and `pass@k_tasks_left_out` says how many had fewer (only when some did).
 * - When tasks differ in n, also pass@m for the largest m every task has (m > 1), over all tasks.
 * - mean@k: the mean over all tasks of each task's mean over its n values; pass@1 is over all tasks.
 * Values are per task binary (all 0 or 1) or not, as upstream decides it (`reward_profile.py`);
 * the accumulator gives a task's values in rollout order (see {@link taskPassAtK}).
 */
export function passAtKOf(perTask: ReadonlyMap<number, readonly number[]>): Record<string, number> | null {
  const tasks = [...perTask.values()].filter((vs) => vs.length > 0);
  if (tasks.length === 0) return null;
  const ns = tasks.map((vs) => vs.length);
  const k = Math.max(...ns);
  if (k <= 1) return null;
  const common = Math.min(...ns);
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const out: Record<string, number> = { [`mean@${k}`]: mean(tasks.map(mean)) };
  for (const kk of [...new Set([1, common, k])].sort((a, b) => a - b)) {
    const eligible = tasks.filter((vs) => vs.length >= kk);
    out[`pass@${kk}`] = mean(eligible.map((vs) => taskPassAtK(vs, kk)));
  }
  const leftOut = tasks.length - tasks.filter((vs) => vs.length >= k).length;
  if (leftOut > 0) out['pass@k_tasks_left_out'] = leftOut;
  return out;
}

/**
 * One task's pass@k from its n ≥ k values. Binary values (all 0 or 1): the unbiased estimator
 * 1 - C(n-c, k) / C(n, k) (c = the values that are 1). Others (partial credit): upstream's
 * best of the first k values (in rollout order, so the figure does not depend on which rollouts
 * finished first).
 */
export function taskPassAtK(values: readonly number[], k: number): number {
  if (values.every((v) => v === 0 || v === 1)) return passAtKUnbiased(values.length, values.filter((v) => v === 1).length, k);
  return Math.max(...values.slice(0, k));
}

/** `{mean_where_present}` when some field is missing from some rows, else nothing. */
function withPresentMeans(acc: MetricsAccumulator): { mean_where_present?: Record<string, { mean: number; rows: number }> } {
  const present = acc.presentMeans();
  return Object.keys(present).length > 0 ? { mean_where_present: present } : {};
}

/** 1 - C(n - c, k) / C(n, k): the chance that at least one of k samples (of n, c correct) is correct. */
export function passAtKUnbiased(n: number, c: number, k: number): number {
  if (n - c < k) return 1;
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}
